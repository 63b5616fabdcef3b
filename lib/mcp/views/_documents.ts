// The documents view: documents and articles as a list with citation, date, country, type and
// links, and the next page loaded by calling the tool again through the host.
import { page } from "./_common.ts";

const CSS = String.raw`
#docs{list-style:none;margin:6px 0;padding:0}#docs li{padding:7px 0;border-bottom:1px solid var(--line)}
.t{font-weight:600}.meta{display:flex;gap:6px;flex-wrap:wrap;margin:2px 0;font-size:12px}
.tag{border:1px solid var(--line);border-radius:10px;padding:0 6px;color:var(--mut)}.cite{font-size:12px;color:var(--mut);font-style:italic}
.snip{font-size:12px;margin-top:2px}
`;

const BODY = String.raw`<h1 id="title">Documents</h1><div id="status" class="mut">Waiting for data…</div>
<ul id="docs"></ul><div class="row"><button id="next" hidden>Next page</button><span id="count" class="mut"></span></div><div id="foot" class="foot"></div>`;

const SCRIPT = String.raw`
var S={docs:[],model:null};
function show(model,add){S.model=model;S.docs=add?S.docs.concat(model.documents):model.documents.slice();
  $("title").textContent=model.query?"“"+model.query+"”":"Documents";
  B.status(S.docs.length+" shown"+(model.total!=null?" of "+model.total:""));
  var ul=$("docs");ul.textContent="";
  S.docs.forEach(function(d){var meta=el("div",{class:"meta"},d.date?el("span",{class:"tag",text:d.date}):null,d.country?el("span",{class:"tag",text:d.country}):null,d.type?el("span",{class:"tag",text:d.type}):null);
    ul.appendChild(el("li",{class:"doc"},link(d.url,d.title,"t"),meta,
      d.citation?el("div",{class:"cite",text:d.citation}):null,d.snippet?el("div",{class:"snip",text:d.snippet}):null))});
  $("count").textContent=model.total!=null?S.docs.length+" of "+model.total:"";
  var foot=$("foot");foot.textContent="";foot.appendChild(el("span",{text:"Source: "}));
  foot.appendChild(link(model.source.url,model.source.name));
  foot.appendChild(el("span",{text:" · "+model.licence}));
  $("next").hidden=!(model.next&&B.canCall())}
$("next").onclick=function(){var b=this;b.disabled=true;B.status("Loading…");B.call(S.model.next).then(function(m){b.disabled=false;show(m,true)},function(x){b.disabled=false;B.fail(x.message)})};
B.on(function(model){show(model,false)});B.start("opendata-mcp documents");
`;

/** The documents view document. */
export function documentsHtml(): string {
  return page("Documents", CSS, BODY, SCRIPT);
}
