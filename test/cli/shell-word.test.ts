// shellWord: what sessync prints for pasting into a shell (resume's `cd <cwd> && claude --resume`, pull's --map).
import { describe, expect, it } from 'vitest';
import { shellWord } from '../../cli/format/shell-word.js';

describe('shellWord', () => {
  it.each([
    ['/home/me/app', '/home/me/app'],
    ['github.com/a/b=/x/y', 'github.com/a/b=/x/y'],
    ['/home/me/my app', `'/home/me/my app'`],
    [`/tmp/it's`, `'/tmp/it'\\''s'`],
    ['/tmp/$(rm -rf x)', `'/tmp/$(rm -rf x)'`],
    ['', `''`],
  ])('%s -> %s', (input, out) => expect(shellWord(input)).toBe(out));
});
