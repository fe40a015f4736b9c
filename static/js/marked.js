// Server pages (transcripts) mark a text written in MAX's markup with data-markup="html|markdown": draw it as
// MAX shows it, now and after every htmx swap.
import { renderMarked } from "./markup.js";

renderMarked(document);
document.body.addEventListener("htmx:afterSettle", (evt) => renderMarked(evt.detail.elt || document));
