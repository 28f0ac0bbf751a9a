import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { buildProgram } from './program.js';
import { HELP_GROUPS, inHelpGroup } from './help.js';

/** Each option's help entry (its flags line and the wrapped lines under it), by heading. */
function entries(help: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let heading = '';
  for (const line of help.split('\n')) {
    if (/^\S.*:$/.test(line)) {
      heading = line;
      out.set(heading, []);
    } else if (/^ {2}-/.test(line)) out.get(heading)?.push(line.trim());
    else if (/^ {3,}\S/.test(line) && out.get(heading)?.length) {
      const list = out.get(heading)!;
      list[list.length - 1] += ` ${line.trim()}`;
    }
  }
  return out;
}

for (const name of ['run', 'sweep'])
  test(`${name} --help lists its options in groups (load and schedule, runtime, output, Docker), each default once`, async () => {
    const program = await buildProgram([name]);
    const help = program.commands.find((c) => c.name() === name)!.helpInformation();
    const byGroup = entries(help);
    const headings = [...byGroup.keys()].filter((h) => h !== 'Arguments:' && !h.startsWith('Usage'));
    assert.deepEqual(headings, ['Options:', ...Object.values(HELP_GROUPS)]);
    const flagsIn = (h: string) => (byGroup.get(h) ?? []).map((e) => e.split(/[ ,]/)[0]);
    assert.ok(flagsIn(HELP_GROUPS.schedule).includes('--scale'));
    assert.ok(flagsIn(HELP_GROUPS.runtime).includes('--runtime'));
    assert.ok(flagsIn(HELP_GROUPS.output).includes('--out'));
    assert.ok(flagsIn(HELP_GROUPS.docker).includes('--project'));
    // The options issue 31 added, each in its group.
    for (const [flag, group] of [
      ['--any-scale', HELP_GROUPS.schedule],
      ['--priority', HELP_GROUPS.runtime],
      ['--wait-for-quiet', HELP_GROUPS.runtime],
      ...(name === 'sweep'
        ? [
            ['--resume', HELP_GROUPS.output],
            ['--rerun-invalid', HELP_GROUPS.output],
            ['--max-reruns', HELP_GROUPS.output],
          ]
        : []),
    ] as const)
      assert.ok(flagsIn(group).includes(flag), `${flag} is under ${group}`);
    assert.ok(
      !flagsIn(HELP_GROUPS.schedule).includes('--project'),
      'Docker options are not among the others',
    );
    for (const e of [...byGroup.values()].flat()) {
      assert.ok((e.match(/default/g) ?? []).length <= 1, `one default: ${e}`);
      assert.doesNotMatch(e, /\(default: \[\]\)/);
    }
  });

test('inHelpGroup puts a later option in its group without reordering the groups', () => {
  const cmd = new Command('x').option('--out <DIR>', 'o').option('--scale <F>', 's').option('--plain', 'p');
  inHelpGroup(cmd);
  cmd.option('--wait-for-quiet', 'w');
  inHelpGroup(cmd, 'runtime', '--wait-for-quiet');
  assert.deepEqual(
    cmd.options.map((o) => [o.long, o.helpGroupHeading]),
    [
      ['--plain', undefined],
      ['--scale', HELP_GROUPS.schedule],
      ['--wait-for-quiet', HELP_GROUPS.runtime],
      ['--out', HELP_GROUPS.output],
    ],
  );
});
