// Refusals that name fields (the problems listed under a form) also mark those fields in the form, and
// the list names them by their label rather than by the field's name.

import "./slug.js";

function formOf(evt) {
  const elt = evt.detail.requestConfig && evt.detail.requestConfig.elt;
  if (!elt) return null;
  return elt.tagName === "FORM" ? elt : elt.closest("form");
}

function labelOf(field) {
  const label = field.closest("label") || (field.id && document.querySelector(`label[for="${CSS.escape(field.id)}"]`));
  if (!label) return "";
  const text = [...label.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join(" ");
  return text.trim();
}

function mark(evt) {
  const form = formOf(evt);
  if (!form || form.hasAttribute("data-draft-form")) return;  // the editor's forms are marked by the server
  for (const field of form.querySelectorAll("[data-refused]")) {
    field.removeAttribute("aria-invalid");
    field.classList.remove("invalid");
    delete field.dataset.refused;
  }
  let first = null;
  for (const item of evt.detail.target.querySelectorAll("[data-field]")) {
    const field = form.elements.namedItem(item.dataset.field);
    if (!field || !field.setAttribute) continue;
    field.setAttribute("aria-invalid", "true");
    field.classList.add("invalid");
    field.dataset.refused = "1";
    const code = item.querySelector("code");
    const name = labelOf(field);
    if (code && name) code.textContent = name;
    first = first || field;
  }
  if (first) first.focus();
}

document.body.addEventListener("htmx:afterSwap", mark);
