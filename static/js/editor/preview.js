// The side panel's message preview: the text in its format and the picture, as MAX will show them, redrawn
// as the person types; and the upload of a message's picture (the form saves once it has the file's id).
import { csrfToken, settle } from "../api.js";
import { t } from "../i18n.js";
import { fillMessage } from "../markup.js";

/** The message a block of the state form describes, as the document would hold it. */
function messageOf(block) {
  const i = block.dataset.message;
  const value = (name) => {
    const field = block.querySelector(`[name="say[${i}].${name}"]`);
    return field ? field.value : "";
  };
  const picture = value("picture");
  return { text: value("text"), format: value("format") || null,
           image: picture === "image" ? value("image").trim() : null,
           upload: picture === "upload" ? value("upload") : null };
}

function redraw(block) {
  const message = messageOf(block);
  const chosen = block.querySelector(`[name="say[${block.dataset.message}].picture"]`);
  for (const field of block.querySelectorAll("[data-picture-field]")) {
    field.hidden = !chosen || field.dataset.pictureField !== chosen.value;
  }
  const bubble = block.querySelector("[data-preview-bubble]");
  if (bubble) fillMessage(bubble, message);
}

// The server's refusals of a file, in the page's language.
function refusal(res) {
  if (res.status === 413) return t("The file is larger than 10 MB; choose a smaller picture.");
  if (res.status === 422) return t("This file is not a picture MAX can show; upload a PNG, JPEG, GIF or WebP image.");
  if (res.expired) return t("Your session has expired.");
  return t("The picture was not uploaded. Try again.");
}

async function upload(input) {
  const block = input.closest("[data-message]");
  const file = input.files && input.files[0];
  if (!block || !file) return;
  const status = block.querySelector("[data-upload-status]");
  status.textContent = t("Uploading…");
  const res = await settle(fetch(`/api/uploads?filename=${encodeURIComponent(file.name)}`, {
    method: "POST", body: file, credentials: "same-origin",
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken(), "Content-Type": "application/octet-stream" },
  }));
  input.value = "";
  if (!res.ok || !res.data || !res.data.id) {
    status.textContent = refusal(res);
    return;
  }
  status.textContent = t("Uploaded: {name}", { name: res.data.filename || file.name });
  const label = block.querySelector("[data-upload-label]");
  if (label) label.textContent = t("Replace the picture");
  const hidden = block.querySelector("[data-upload-value]");
  hidden.value = res.data.id;
  redraw(block);
  hidden.dispatchEvent(new Event("change", { bubbles: true }));  // the form saves the message with it
}

/** Keep every message preview of `panel` current, and upload the pictures chosen in it. */
export function installPreview(panel) {
  const touched = (evt) => {
    const block = evt.target.closest && evt.target.closest("[data-message]");
    if (block) redraw(block);
  };
  panel.addEventListener("input", touched);
  panel.addEventListener("change", (evt) => {
    if (evt.target.matches && evt.target.matches("[data-upload-file]")) {
      evt.stopPropagation();  // choosing a file is not an edit: the form posts once the file is uploaded
      upload(evt.target);
      return;
    }
    touched(evt);
  }, true);
  document.body.addEventListener("htmx:afterSettle", () => {
    for (const block of panel.querySelectorAll("[data-message]")) redraw(block);
  });
}
