// Translations for the page's scripts: the server renders the catalogue for the user's language into
// <script type="application/json" id="botflow-i18n"> (no inline code, so CSP stays strict); English is the key.
const catalogue = (() => {
  const node = document.getElementById("botflow-i18n");
  if (!node) return {};
  try { return JSON.parse(node.textContent) || {}; } catch { return {}; }
})();

// t("Saved {n} states", {n: 3}): the translated text with {name} placeholders filled in.
export function t(text, values) {
  const template = Object.prototype.hasOwnProperty.call(catalogue, text) ? catalogue[text] : text;
  if (!values) return template;
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, key) => (key in values ? String(values[key]) : whole));
}

// The page's language ("ru" or "en"), for dates and numbers formatted in the browser.
export const lang = document.documentElement.lang || "en";
