// What a state's card shows and where its rows and ports are, from the document alone (no DOM measuring),
// so the canvas, the layout and the overlay agree on every size without asking the browser.

import { t } from "../i18n.js";
import { markupWords, pictureUrl } from "../markup.js";
import { allTexts, shown } from "./language.js";

export const CARD_WIDTH = 240;
export const TITLE_SIZE = { w: 180, h: 48 };  // a state drawn with its title only
const PAD = 8;
const TITLE_H = 22;
const LINE_H = 16;
const CHARS_PER_LINE = 34;  // 12px text in 224px, a little pessimistic so two lines always fit
const ROW_H = 24;

/** The first message with words or a picture: its words in the shown language flattened to one string
 * (markup left out, a picture as ▣), the message itself for the overlay to draw in its markup, whether the
 * words are the default language's for want of a translation, and the longest words in any language (the
 * card fits every language, so switching moves nothing). */
function firstMessage(state) {
  const say = (state.say || []).find((m) => allTexts(m.text).some((x) => x.trim()) || pictureUrl(m));
  if (!say) return { text: "", say: null, own: "", fallback: false, longest: 0 };
  const { text: own, fallback } = shown(say.text);
  const flat = (x) => markupWords(x, say.format).replace(/\s+/g, " ").trim();
  const picture = pictureUrl(say) ? "▣ " : "";
  const longest = Math.max(0, ...allTexts(say.text).map((x) => (picture + flat(x)).trim().length));
  return { text: (picture + flat(own)).trim(), say, own, fallback, longest };
}

// Input types as the chip names them, in the page's language (the side panel's list uses longer names).
const INPUT_NAMES = {
  text: () => t("text"), phone: () => t("phone"), email: () => t("email"), number: () => t("number"),
  integer: () => t("whole number"), choice: () => t("choice"), regex: () => t("pattern"), date: () => t("date"),
  attachment: () => t("attachment"), contact: () => t("contact"), location: () => t("location"),
  any: () => t("any message"),
};

/** The input as a chip: `phone → phone` (its type in words, then the data key it saves). */
export function inputChip(input) {
  if (!input) return "";
  const named = INPUT_NAMES[input.type];
  const type = named ? named() : input.type || "?";
  return input.save_as ? `${type} → ${input.save_as}` : type;
}

/** Every button of every message, one row each; callback buttons carry their payload. */
function buttonRows(state) {
  const rows = [];
  for (const message of state.say || []) {
    for (const row of message.buttons || []) {
      for (const b of row || []) {
        const { text, fallback } = shown(b.text);
        if (b.payload !== undefined) rows.push({ kind: "button", text: text || b.payload, payload: String(b.payload), fallback });
        else if (b.url !== undefined) rows.push({ kind: "link", text: text || b.url, fallback });
        else if (b.request) rows.push({ kind: "request", text: text || b.request, fallback });
      }
    }
  }
  return rows;
}

/**
 * The card of `state`: its texts, its rows, its size, and its ports (`button:<payload>`, `input`) with their
 * offsets from the card's centre. With `cards` off, a title-sized box without rows.
 */
export function cardOf(state, { cards = true } = {}) {
  if (!cards) return { w: TITLE_SIZE.w, h: TITLE_SIZE.h, title: state.title || state.id, rows: [], ports: [], message: "", lines: 0 };
  const first = firstMessage(state);
  const message = first.text;
  const lines = message ? Math.min(2, Math.ceil(Math.max(message.length, first.longest) / CHARS_PER_LINE)) : 0;
  const rows = [];
  if (state.input) rows.push({ kind: "input", text: inputChip(state.input) });
  rows.push(...buttonRows(state));
  const top = PAD + TITLE_H + (lines ? lines * LINE_H + 6 : 0);
  const h = top + rows.length * ROW_H + PAD;
  const w = CARD_WIDTH;
  const ports = [];
  const seen = new Set();
  rows.forEach((row, i) => {
    row.top = top + i * ROW_H;
    const key = row.kind === "input" ? "input" : row.kind === "button" ? `button:${row.payload}` : null;
    if (key && !seen.has(key)) {
      seen.add(key);
      row.port = key;
      ports.push({ key, x: w / 2, y: row.top + ROW_H / 2 - h / 2 });
    }
  });
  // `markup`: the first message's text (in the shown language) and format when it has one, for the overlay
  // to draw as MAX would.
  const markup = first.say && first.say.format ? { text: first.own, format: first.say.format } : null;
  return { w, h, title: state.title || state.id, message, fallback: first.fallback, lines, rows, ports, markup };
}

/** The port a transition leaves from: its button's row, or the input row; null for the card itself. */
export function portOf(tr) {
  if (tr.on === "button" && tr.payload !== undefined) return `button:${tr.payload}`;
  if (tr.on === "input") return "input";
  return null;
}
