import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeStruct,
  goBool,
  goFloat32,
  goFloat32String,
  goInt64,
  goJsonString,
  goString_,
  goStruct,
  parseGoJson,
  type GoStruct,
} from './goJson.js';

const inner: GoStruct = {
  name: 'LatencyToxic',
  typeName: 'toxics.LatencyToxic',
  fields: [{ json: 'latency', type: goInt64 }],
};
const outer: GoStruct = {
  name: 'ToxicWrapper',
  typeName: 'toxics.ToxicWrapper',
  fields: [
    { json: 'name', type: goString_ },
    { json: 'enabled', type: goBool },
    { json: 'toxicity', type: goFloat32 },
    { json: 'attributes', type: goStruct(inner) },
  ],
};

function syntaxError(text: string): string {
  try {
    parseGoJson(text);
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
}

test('malformed bodies give the messages of Go encoding/json', () => {
  assert.equal(syntaxError(''), 'EOF');
  assert.equal(syntaxError('  \n'), 'EOF');
  assert.equal(syntaxError('{"name": '), 'unexpected EOF');
  assert.equal(syntaxError('nope'), "invalid character 'o' in literal null (expecting 'u')");
  assert.equal(syntaxError('x'), "invalid character 'x' looking for beginning of value");
  assert.equal(syntaxError('{name:1}'), "invalid character 'n' looking for beginning of object key string");
  assert.equal(syntaxError('{"a" 1}'), "invalid character '1' after object key");
  assert.equal(syntaxError('{"a":1 "b":2}'), `invalid character '"' after object key:value pair`);
  assert.equal(syntaxError('[1 2]'), "invalid character '2' after array element");
  assert.equal(syntaxError('{"a":-x}'), "invalid character 'x' in numeric literal");
  assert.equal(syntaxError('{"a":1.}'), "invalid character '}' after decimal point in numeric literal");
  assert.equal(syntaxError('"a\\qb"'), "invalid character 'q' in string escape code");
  assert.equal(syntaxError('"a\nb"'), "invalid character '\\n' in string literal");
  assert.equal(syntaxError("{'a':1}"), "invalid character '\\'' looking for beginning of object key string");
  // Decoder semantics: the first value counts, what follows is ignored.
  assert.deepEqual(parseGoJson('{"a":1} trailing garbage'), {
    t: 'obj',
    entries: [['a', { t: 'num', raw: '1' }]],
  });
});

test('keys match case-insensitively, exact first, later duplicates win, unknown keys are ignored', () => {
  const t: Record<string, unknown> = { name: '', attributes: { latency: 0 } };
  const err = decodeStruct(
    parseGoJson('{"NAME":"a","name":"b","Attributes":{"Latency":100},"other":[1,2]}'),
    outer,
    t,
  );
  assert.equal(err, undefined);
  assert.deepEqual(t, { name: 'b', attributes: { latency: 100 } });
});

test('type mismatches are reported like Go, with the struct and field path', () => {
  const run = (text: string): string | undefined => decodeStruct(parseGoJson(text), outer, {});
  assert.equal(
    run('{"attributes":{"latency":"x"}}'),
    'json: cannot unmarshal string into Go struct field LatencyToxic.attributes.latency of type int64',
  );
  assert.equal(
    run('{"attributes":{"latency":1.5}}'),
    'json: cannot unmarshal number 1.5 into Go struct field LatencyToxic.attributes.latency of type int64',
  );
  assert.equal(
    run('{"attributes":5}'),
    'json: cannot unmarshal number into Go struct field ToxicWrapper.attributes of type toxics.LatencyToxic',
  );
  assert.equal(
    run('{"enabled":"yes"}'),
    'json: cannot unmarshal string into Go struct field ToxicWrapper.enabled of type bool',
  );
  assert.equal(
    run('{"toxicity":1e39}'),
    'json: cannot unmarshal number 1e39 into Go struct field ToxicWrapper.toxicity of type float32',
  );
  assert.equal(run('[]'), 'json: cannot unmarshal array into Go value of type toxics.ToxicWrapper');
  assert.equal(run('null'), undefined, 'null decodes to nothing, as in Go');
});

test('encoding matches json.Marshal: float32 in shortest form, HTML-safe strings', () => {
  assert.equal(goFloat32String(Math.fround(0.1)), '0.1');
  assert.equal(goFloat32String(1), '1');
  assert.equal(goFloat32String(0.5), '0.5');
  assert.equal(goFloat32String(Math.fround(1e-7)), '1e-7');
  assert.equal(goJsonString('<a&b>'), '"\\u003ca\\u0026b\\u003e"');
});
