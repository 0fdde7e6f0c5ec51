import { parseErrorText } from "./error-body.ts";

/**
 * `fetch` for the openai SDK that rewrites every error answer's body into
 * OpenAI's shape, `{"error":{…}}` holding what error-body.ts read from it. The
 * SDK reads only that shape: Gemini's array or Mistral's flat body would
 * otherwise reach us as "400 status code (no body)", their message lost.
 */
export async function errorShapingFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.ok) return response;
  const error = parseErrorText(await response.text());
  const headers = new Headers(response.headers);
  // The new body is plain JSON of another length.
  for (const name of ["content-length", "content-encoding", "transfer-encoding"]) headers.delete(name);
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify({ error }), { status: response.status, statusText: response.statusText, headers });
}
