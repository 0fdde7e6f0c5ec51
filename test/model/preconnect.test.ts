import { afterEach, describe, expect, test } from "bun:test";
import { preconnectModel } from "../../src/model/preconnect.ts";
import { waitUntil } from "../support/deadline.ts";

/**
 * A TCP listener on 127.0.0.1 that counts the connections made to it and the
 * bytes sent over them; with `answer`, a bare HTTP/1.1 server writing it back.
 */
function listener(answer?: string) {
  const seen = { connections: 0, bytes: 0, first: "" };
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open() {
        seen.connections += 1;
      },
      data(socket, chunk) {
        if (seen.bytes === 0) seen.first = new TextDecoder().decode(chunk.subarray(0, 64));
        seen.bytes += chunk.byteLength;
        if (answer !== undefined) socket.write(answer);
      },
    },
  });
  listeners.push(server);
  return { seen, url: `http://127.0.0.1:${server.port}/v1` };
}

const listeners: { stop(closeActive?: boolean): void }[] = [];
afterEach(() => {
  for (const server of listeners.splice(0)) server.stop(true);
});

async function connectionsReach(seen: { connections: number }, count: number): Promise<void> {
  await waitUntil(() => seen.connections >= count, () => `${count} connection(s); ${seen.connections} so far`);
}

describe("preconnectModel", () => {
  test("opens a connection to the endpoint before any request, and sends nothing over it", async () => {
    const { seen, url } = listener("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok");
    expect(preconnectModel({ baseUrl: url }, {})).toBe(true);
    await connectionsReach(seen, 1);
    expect(seen.connections).toBe(1);
    // The first bytes over the connection are the first request's own: nothing was sent ahead of it.
    expect(await (await fetch(`${url}/chat/completions`, { method: "POST", body: "{}" })).text()).toBe("ok");
    expect(seen.connections).toBe(1);
    expect(seen.first).toStartWith("POST /v1/chat/completions HTTP/1.1");
  });

  test("the first request then goes over that connection: no second one is opened", async () => {
    // At the socket level, so every connection is counted.
    const { seen, url } = listener("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok");
    expect(preconnectModel({ baseUrl: url }, {})).toBe(true);
    await connectionsReach(seen, 1);
    expect(seen.connections).toBe(1);
    const answer = await fetch(`${url}/chat/completions`, { method: "POST", body: "{}" });
    expect(await answer.text()).toBe("ok");
    expect(seen.connections).toBe(1);
  });

  test("not when a proxy carries the requests, nor for a replayed run, nor for a URL fetch cannot use", async () => {
    const { seen, url } = listener();
    for (const name of ["HTTPS_PROXY", "http_proxy", "ALL_PROXY"]) expect(preconnectModel({ baseUrl: url }, { [name]: "http://proxy.internal:3128" })).toBe(false);
    expect(preconnectModel({ baseUrl: url, replayPath: "run.cassette.jsonl" }, {})).toBe(false);
    expect(preconnectModel({ baseUrl: "not a url" }, {})).toBe(false);
    // An empty variable sends nothing through a proxy. Its connection comes after any the calls
    // above could have made (one listener accepts in order): it is the only one.
    expect(preconnectModel({ baseUrl: url }, { HTTPS_PROXY: "" })).toBe(true);
    await connectionsReach(seen, 1);
    expect(seen.connections).toBe(1);
  });
});
