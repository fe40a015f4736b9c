// A flow id suggested from its title while the id has not been typed by hand: "Запись к врачу" ->
// "zapis_k_vrachu" (Russian letters as in passports, ICAO 9303, without the apostrophes).

const LETTERS = {
  а: "a", б: "b", в: "v", г: "g", д: "d", е: "e", ё: "e", ж: "zh", з: "z", и: "i", й: "i", к: "k", л: "l",
  м: "m", н: "n", о: "o", п: "p", р: "r", с: "s", т: "t", у: "u", ф: "f", х: "kh", ц: "ts", ч: "ch",
  ш: "sh", щ: "shch", ъ: "ie", ы: "y", ь: "", э: "e", ю: "iu", я: "ia",
};

/** The id a title suggests: Latin lowercase, digits and _, starting with a letter; "" when nothing is left. */
export function slugOf(title, max = 64) {
  const latin = [...title.toLowerCase()].map((ch) => (ch in LETTERS ? LETTERS[ch] : ch)).join("")
    .normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  let slug = latin.replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  if (slug && !/^[a-z]/.test(slug)) slug = `flow_${slug}`;
  return slug.slice(0, max).replace(/_+$/, "");
}

/** Fill `[data-slug-from]` inputs from the named field until the person types into them. */
function install(root) {
  for (const target of root.querySelectorAll("input[data-slug-from]")) {
    const source = target.form && target.form.elements.namedItem(target.dataset.slugFrom);
    if (!source || target.dataset.slugReady) continue;
    target.dataset.slugReady = "1";
    let suggested = target.value === "";
    target.addEventListener("input", () => { suggested = target.value === ""; });
    source.addEventListener("input", () => {
      if (suggested) target.value = slugOf(source.value, target.maxLength > 0 ? target.maxLength : undefined);
    });
  }
}

install(document);
