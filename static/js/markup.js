// MAX's message markup shown the way MAX shows it, built as DOM nodes (never as HTML text), so nothing a
// text holds can run or style the page: html keeps only MAX's tags (others are dropped, their text stays),
// markdown knows MAX's markers. Links open only http(s) and max:// addresses. Mirrors flows/markup.py.

// The html tags MAX renders, as elements of ours.
const HTML_TAGS = { b: "strong", i: "em", u: "u", s: "s", code: "code", pre: "pre", a: "a", mark: "mark",
  blockquote: "blockquote", h1: "h1" };
const HTML_TAG = /<(\/?)([A-Za-z][A-Za-z0-9]*)((?:\s[^<>]*)?)(\/?)>/g;
const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')/i;
const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(amp|lt|gt|quot|apos|nbsp));/gi;
const NAMED = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0" };

// Markdown spans: [marker, element], longest markers first.
const SPANS = [["**", "strong"], ["~~", "s"], ["++", "u"], ["^^", "mark"], ["*", "em"]];

function safeHref(url) {
  return typeof url === "string" && /^(https?|max):\/\/\S+$/i.test(url.trim()) ? url.trim() : null;
}

function decode(text) {
  return text.replace(ENTITY, (all, dec, hex, name) => {
    if (name) return NAMED[name.toLowerCase()];
    const code = dec ? Number(dec) : parseInt(hex, 16);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
  });
}

function link(href, target) {
  const safe = safeHref(href);
  const a = document.createElement(safe ? "a" : "span");
  if (safe) { a.href = safe; a.target = "_blank"; a.rel = "noopener noreferrer"; }
  a.className = "mx-link";
  return target.appendChild(a);
}

/** Html as MAX shows it: its tags become elements, any other tag is left out, entities are decoded. */
function renderHtml(text, root) {
  const stack = [root];
  let at = 0;
  const put = (chunk) => { if (chunk) stack[stack.length - 1].append(decode(chunk)); };
  for (const m of text.matchAll(HTML_TAG)) {
    put(text.slice(at, m.index));
    at = m.index + m[0].length;
    const name = m[2].toLowerCase();
    const tag = HTML_TAGS[name];
    if (!tag || m[4]) continue;  // MAX strips other tags and keeps their text
    if (m[1]) {
      const open = stack.findLastIndex((node, i) => i > 0 && node.dataset.tag === name);
      if (open > 0) stack.length = open;
      continue;
    }
    const parent = stack[stack.length - 1];
    let node;
    if (name === "a") {
      const found = HREF.exec(m[3] || "");
      node = link(found ? decode(found[1] ?? found[2]) : "", parent);
    } else {
      node = parent.appendChild(document.createElement(tag));
    }
    node.dataset.tag = name;
    stack.push(node);
  }
  put(text.slice(at));
}

/** One line of MAX markdown: code, links, then the paired markers, `\x` for a literal x. */
function renderInline(text, target) {
  let plain = "";
  const flush = () => { if (plain) { target.append(plain); plain = ""; } };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "\\" && i + 1 < text.length && /[\\*~`[\]+^#>]/.test(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      const end = text.indexOf("`", i + 1);
      if (end > i + 1) {
        flush();
        target.appendChild(document.createElement("code")).textContent = text.slice(i + 1, end);
        i = end + 1;
        continue;
      }
    }
    if (ch === "[") {
      const found = /^\[([^\]\n]+)\]\(([^)\s]+)\)/.exec(text.slice(i));
      if (found) {
        flush();
        renderInline(found[1], link(found[2], target));
        i += found[0].length;
        continue;
      }
    }
    const span = SPANS.find(([marker]) => text.startsWith(marker, i));
    if (span) {
      const [marker, tag] = span;
      const end = closing(text, marker, i + marker.length);
      if (end > i + marker.length) {
        flush();
        renderInline(text.slice(i + marker.length, end), target.appendChild(document.createElement(tag)));
        i = end + marker.length;
        continue;
      }
    }
    plain += ch;
    i += 1;
  }
  flush();
}

/** Where `marker` closes the span opened before `from` (escaped markers skipped), or -1. */
function closing(text, marker, from) {
  if (text[from] === " ") return -1;
  for (let j = from; j < text.length; j += 1) {
    if (text[j] === "\\") { j += 1; continue; }
    if (text.startsWith(marker, j) && text[j - 1] !== " ") return j;
  }
  return -1;
}

/** MAX markdown: `# heading` and `> quote` lines, the rest inline. */
function renderMarkdown(text, root) {
  text.split("\n").forEach((line, n) => {
    if (n > 0) root.append("\n");
    const heading = /^#{1,6} (.*)$/.exec(line);
    const quote = /^> ?(.*)$/.exec(line);
    if (heading) renderInline(heading[1], root.appendChild(document.createElement("h1")));
    else if (quote) renderInline(quote[1], root.appendChild(document.createElement("blockquote")));
    else renderInline(line, root);
  });
}

/** The text as MAX shows it in `format` ("markdown", "html", or none for plain), as a fragment of nodes. */
export function renderMarkup(text, format) {
  const root = document.createDocumentFragment();
  const source = typeof text === "string" ? text : "";
  if (format === "html") renderHtml(source, root);
  else if (format === "markdown") renderMarkdown(source, root);
  else root.append(source);
  return root;
}

/** The words a person reads in the marked-up text (markers and tags left out), for a one-line summary. */
export function markupWords(text, format) {
  if (!format) return typeof text === "string" ? text : "";
  const box = document.createElement("div");
  box.append(renderMarkup(text, format));
  return box.textContent;
}

/** Where a message's picture is seen: its https link, or the uploaded file; null when it has none. */
export function pictureUrl(message) {
  if (message && typeof message.image === "string" && /^https:\/\/\S+$/i.test(message.image)) return message.image;
  if (message && typeof message.upload === "string" && /^up_[a-f0-9]{24}$/.test(message.upload)) {
    return `/api/uploads/${message.upload}`;
  }
  return null;
}

/** A message's look inside `holder`: its picture (when any) above the text in its markup. */
export function fillMessage(holder, message, { textClass = "mx-text", pictureClass = "mx-picture" } = {}) {
  holder.replaceChildren();
  const src = pictureUrl(message);
  if (src) {
    const img = document.createElement("img");
    img.className = pictureClass;
    img.src = src;
    img.alt = "";
    img.loading = "lazy";
    img.referrerPolicy = "no-referrer";
    holder.append(img);
  }
  const text = document.createElement("div");
  text.className = textClass;
  text.append(renderMarkup(message ? message.text : "", message ? message.format : null));
  if (text.textContent || !src) holder.append(text);
  return holder;
}

/** Render every `[data-markup]` element below `root` (server pages: transcripts) from its own text. */
export function renderMarked(root = document) {
  for (const node of root.querySelectorAll("[data-markup]:not([data-markup-done])")) {
    const format = node.dataset.markup;
    if (format !== "html" && format !== "markdown") continue;
    node.replaceChildren(renderMarkup(node.textContent, format));
    node.dataset.markupDone = "";
  }
}
