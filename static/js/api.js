// JSON calls to the server with the browser session: unsafe methods carry the CSRF header.
import { t } from "./i18n.js";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

/** Where to log in again and come back to this page. */
export function loginUrl() {
  return `/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`;
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
    return { status: 0, ok: false, headers: new Headers(), data: { message: t("The server cannot be reached. Check the connection and try again.") } };
  }
  let data = null;
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) data = await response.json().catch(() => null);
  // The browser session ended (logged out elsewhere, or the server's key changed): say so, not how tokens work.
  const expired = response.status === 401;
  if (expired) data = { ...(data || {}), message: t("Your session has expired.") };
  return { status: response.status, ok: response.ok, headers: response.headers, data, expired };
}

/** The revision inside a strong ETag header value. */
export function revisionOf(etag) {
  if (!etag) return null;
  return etag.replace(/^W\//, "").replace(/^"|"$/g, "");
}
