// Talking to the plugin's routes under /data/plugin/aggregate/. URLs are built from this module's own
// address, so they hold wherever TensorBoard is mounted (path prefix, iframe or not).

const ROUTES = new URL("../", import.meta.url);

/** A failed request, with the backend's one-line message when it sent one. */
export class RequestError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
    // A 400 names the option first ("runs: invalid regular expression ..."): remember which.
    const match = status === 400 ? /^([a-z_]+):/.exec(message) : null;
    this.option = match ? match[1] : null;
  }
}

/** Absolute URL of `route` (e.g. "aggregate") with `params` (URLSearchParams or object). */
export function routeUrl(route, params) {
  const url = new URL(route, ROUTES);
  const search = params instanceof URLSearchParams ? params : new URLSearchParams(params || {});
  url.search = search.toString();
  return url.href;
}

/** GET `url` and return the body as text; throws RequestError with a plain message on failure. */
export async function getText(url, signal) {
  let response;
  try {
    response = await fetch(url, { signal, credentials: "same-origin" });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new RequestError(0, "Cannot reach TensorBoard: is it still running?");
  }
  const text = await response.text();
  if (!response.ok) {
    const line = text.trim().split("\n")[0] || `the server answered ${response.status}`;
    throw new RequestError(response.status, response.status >= 500 ? `Server error: ${line}` : line);
  }
  return text;
}

/** GET `url` and parse it as JSON. */
export async function getJSON(url, signal) {
  const text = await getText(url, signal);
  try {
    return { text, data: JSON.parse(text) };
  } catch {
    throw new RequestError(0, "The server sent an answer this page cannot read; try Reload.");
  }
}
