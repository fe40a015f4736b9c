// JSON calls to the server with the browser session: unsafe methods carry the CSRF header.

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

/** fetch with JSON in and out; resolves to {status, ok, headers, data} and never throws on HTTP errors. */
export async function api(method, url, { json, headers = {} } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers }, credentials: "same-origin" };
  if (!SAFE.has(method)) init.headers["X-CSRFToken"] = csrfToken();
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  }
  return settle(fetch(url, init));
}

/** The answer to a fetch already under way, in the shape `api` gives. */
export async function settle(request) {
  let response;
  try {
    response = await request;
  } catch (error) {
    return { status: 0, ok: false, headers: new Headers(), data: { message: "The server cannot be reached." } };
  }
  let data = null;
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) data = await response.json().catch(() => null);
  return { status: response.status, ok: response.ok, headers: response.headers, data };
}

/** The revision inside a strong ETag header value. */
export function revisionOf(etag) {
  if (!etag) return null;
  return etag.replace(/^W\//, "").replace(/^"|"$/g, "");
}
