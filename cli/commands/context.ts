// `sessync context <ref>`: what the model is sent when the session continues: model, thinking level, messages.
import type { Command } from '../command.js';
import { positionals, sessionOf, unlessPathRef } from '../store/locate.js';
import { openSessionView } from '../store/session-file-index-open.js';
import { describeMessage } from '../format/describe-entry.js';

const command: Command = {
  summary: 'Print the context projection of the active branch: model, thinking level and the messages sent to the model.',
  usage: '<ref>',
  usesSessions: unlessPathRef('needs'),
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync context <ref>');
    const { session } = await sessionOf(ctx, ref!);
    const c = await (await openSessionView(session.path, { env: ctx.env })).context();
    const human = [
      `model    ${c.model ? `${c.model.provider}/${c.model.modelId}` : '(none recorded)'}`,
      `thinking ${c.thinkingLevel ?? '(default)'}`,
      `messages ${c.messages.length}`,
      ...c.messages.map((m, i) => `${String(i + 1).padStart(5)}  ${describeMessage(m)}`),
    ].join('\n');
    ctx.print(human, { model: c.model, thinkingLevel: c.thinkingLevel, messages: c.messages });
  },
};
export default command;
