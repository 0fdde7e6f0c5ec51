import { afterEach, expect, test } from "bun:test";
import { REDACTED, clearSecrets, redact, redactValue, registerSecret, registeredSecrets } from "../../src/security/redact.ts";

afterEach(() => clearSecrets());

test("a registered key is masked wherever it occurs; short values are not registered", () => {
  registerSecret("sk-abcdefgh12345678");
  registerSecret("short");
  expect(redact("key=sk-abcdefgh12345678; again sk-abcdefgh12345678!")).toBe(`key=${REDACTED}; again ${REDACTED}!`);
  expect(redact("a short word")).toBe("a short word");
});

test("Authorization and bearer values are masked without being registered", () => {
  expect(redact("Authorization: Bearer abc.def-ghi_123456")).toBe(`Authorization: ${REDACTED}`);
  expect(redact('{"authorization":"Basic dXNlcjpwYXNz"}')).toBe(`{"authorization":"${REDACTED}"}`);
  expect(redact("curl -H 'bearer 0123456789abcdef'")).toBe(`curl -H 'bearer ${REDACTED}'`);
  expect(redact("the bearer of bad news")).toBe("the bearer of bad news");
});

test("redactValue masks every string of a JSON value, keys included", () => {
  registerSecret("sk-abcdefgh12345678");
  expect(redactValue<Record<string, unknown>>({ a: ["x sk-abcdefgh12345678"], "sk-abcdefgh12345678": 1, n: 2, b: null })).toEqual({
    a: [`x ${REDACTED}`],
    [REDACTED]: 1,
    n: 2,
    b: null,
  });
});

test("a short secret is kept for environments but never masked in text", () => {
  registerSecret(" pw12 ");
  expect(registeredSecrets()).toEqual(["pw12"]);
  expect(redact("pw12 is here")).toBe("pw12 is here");
});

test("a JSON key naming Authorization is left whole: the object after it is not a credential", () => {
  // `agent config show --json`: a setting keyed by the header's name holds an object.
  const report = '{"headers.Authorization":{"value":"[REDACTED]","level":"user"},"files":{"Authorization":["x"]}}';
  expect(JSON.parse(redact(report))).toEqual(JSON.parse(report));
});

test("a URL's password is masked however short, and the rest of the URL kept", () => {
  expect(redact("connecting to postgres://agent:pw@db.internal:5432/agent failed")).toBe(
    `connecting to postgres://agent:${REDACTED}@db.internal:5432/agent failed`,
  );
  expect(redact('{"store":"postgresql://u:p%40ss@h/db"}')).toBe(`{"store":"postgresql://u:${REDACTED}@h/db"}`);
  // No password: nothing to mask (a user name alone, a port).
  expect(redact("postgres://agent@db:5432/agent and http://host:8080/x")).toBe("postgres://agent@db:5432/agent and http://host:8080/x");
});
