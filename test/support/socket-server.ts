/**
 * A TCP server on 127.0.0.1 (port 0) that misbehaves below HTTP, for the
 * failures a scripted HTTP server cannot produce: a connection reset before any
 * answer, a socket closed without a word, a TLS client talking to plain HTTP.
 */
import { type Socket, createServer } from "node:net";

export type SocketBehaviour =
  /** Reset the connection (RST) as soon as the request arrives. */
  | "reset"
  /** Close the socket cleanly as soon as the request arrives, answering nothing. */
  | "close"
  /** Answer every request, TLS handshakes included, with a plain HTTP 400. */
  | "plain-http"
  /**
   * Start a 200 event stream with one chunk of text, then reset the connection in
   * the middle of the body: once `resetAfter` resolves (the client has the text;
   * a reset that overtakes unread data discards it), else 20 ms later.
   */
  | "sse-reset";

export interface SocketServerOptions {
  /** "sse-reset": called for each connection once its chunk is written; the reset waits for it. */
  resetAfter?: () => Promise<unknown>;
}

export interface SocketServer extends AsyncDisposable {
  /** The base URL to give the client (`https://` for "plain-http", so the client attempts TLS). */
  url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startSocketServer(behaviour: SocketBehaviour, options: SocketServerOptions = {}): Promise<SocketServer> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    socket.once("data", () => {
      if (behaviour === "reset") socket.resetAndDestroy();
      else if (behaviour === "close") socket.end();
      else if (behaviour === "sse-reset") {
        const event = `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Half an ans" } }] })}\n\n`;
        socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
        socket.write(`${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n`);
        void (options.resetAfter?.() ?? Bun.sleep(20)).then(() => socket.resetAndDestroy());
      }
      else socket.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return {
    url: `${behaviour === "plain-http" ? "https" : "http"}://127.0.0.1:${port}/v1`,
    get connections() {
      return connections;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
