// The language the editor shows the flow's texts in (flow-format.md, "languages"): the default (first
// listed) unless the person picks another; a text missing in it shows the default's, marked as a hint.

let languages = [];
let chosen = null;
const listeners = new Set();

/** The flow's languages (from the document), keeping the choice while it is still listed. */
export function setLanguages(doc) {
  const listed = Array.isArray(doc && doc.languages) ? doc.languages.filter((c) => typeof c === "string") : [];
  const changed = listed.join(",") !== languages.join(",");
  languages = listed;
  if (chosen && !languages.includes(chosen)) chosen = null;
  return changed;
}

export function flowLanguages() {
  return languages;
}

/** The language texts are shown in: the chosen one, else the default; null for a flow without languages. */
export function editingLanguage() {
  return chosen || languages[0] || null;
}

/** Whether another language than the default is being shown. */
export function translating() {
  return Boolean(chosen && languages.length && chosen !== languages[0]);
}

export function chooseLanguage(code) {
  chosen = languages.includes(code) ? code : null;
  for (const listener of listeners) listener(editingLanguage());
}

export function onLanguage(listener) {
  listeners.add(listener);
}

/**
 * A text of the document (a string: the default's, or an object by language) in the shown language:
 * `{ text, fallback }`, where `fallback` says the text is the default's because this language has none.
 */
export function shown(value) {
  const lang = editingLanguage();
  const def = languages[0];
  if (value === null || value === undefined) return { text: "", fallback: false };
  if (typeof value === "string") return { text: value, fallback: Boolean(lang && lang !== def && value) };
  if (typeof value !== "object") return { text: String(value), fallback: false };
  const own = value[lang];
  if (typeof own === "string" && own) return { text: own, fallback: false };
  const base = typeof value[def] === "string" ? value[def] : Object.values(value).find((v) => typeof v === "string") || "";
  return { text: base, fallback: Boolean(base) };
}

/** Every language's text of a value, for sizing a card that must fit whichever is shown. */
export function allTexts(value) {
  if (typeof value === "string") return [value];
  if (value && typeof value === "object") return Object.values(value).filter((v) => typeof v === "string");
  return [];
}

/** A language code's name in the page's language ("en" -> "английский"), capitalised; the code itself if unknown. */
export function languageNames() {
  let names = null;
  try {
    names = new Intl.DisplayNames([document.documentElement.lang || "en"], { type: "language" });
  } catch {
    names = null;
  }
  return (code) => {
    const name = names ? names.of(code) : code;
    return name && name !== code ? name.charAt(0).toUpperCase() + name.slice(1) : code;
  };
}
