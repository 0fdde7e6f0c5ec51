import { parseErrorText } from "./error-body.ts";
import { HttpStatusError, RequestTimeoutError } from "./fetch-failures.ts";

/**
 * POSTs `body` to `url` for an adapter that makes its requests with fetch
 * itself. `timeoutMs` covers the wait for the answer's headers (the stream then
 * has an idle limit of its own): running out is a RequestTimeoutError, `signal`
 * aborting is the caller's. An error status is thrown as an HttpStatusError with
 * what its body said (error-body.ts reads every provider's shape).
 */
export async function postForAnswer(url: string, headers: Record<string, string>, body: string | Blob, signal: AbortSignal, timeoutMs: number): Promise<Response> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new RequestTimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.any([signal, timeout.signal]) });
  } catch (error) {
    if (timeout.signal.aborted && !signal.aborted) throw timeout.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (!response.ok) throw new HttpStatusError(response.status, parseErrorText(await response.text().catch(() => "")), response.headers);
  return response;
}
