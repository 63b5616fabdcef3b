// The router view: opendata_call names one view for every tool it reaches, so this one reads the
// model a result carries and hands its frame to the view that model is for (series, places or
// documents), read through the host with resources/read: the new document replaces this one in
// the same frame and takes over the connection (`ODM_HANDOFF`) without a second handshake. A host
// that cannot pass resource reads on gets the result's text, as a client without views does.
import { page } from "./_common.ts";

const BODY = String.raw`<h1 id="title">Result</h1><div id="status" class="mut">Waiting for data…</div>`;

// Scripts parsed by DOMParser never run; each is made anew, after the new root is in place.
const SCRIPT = String.raw`
function adopt(uri,r){if(!B.cap("serverResources"))return Promise.reject(new Error("This host does not pass resource reads on"));
  return B.req("resources/read",{uri:uri}).then(function(x){var c=x&&x.contents&&x.contents[0];if(!c||typeof c.text!=="string")throw new Error("No view at "+uri);
  var h=B.stop();window.ODM_HANDOFF={seq:h.seq,host:h.host,result:r};
  var root=document.importNode(new DOMParser().parseFromString(c.text,"text/html").documentElement,true),code=[];
  root.querySelectorAll("script").forEach(function(o){code.push(o.textContent);o.remove()});document.replaceChild(root,document.documentElement);
  code.forEach(function(t){var s=document.createElement("script");s.textContent=t;document.body.appendChild(s)})})}
B.on(function(model,r){if(!/^(series|places|documents)$/.test(model.view)){B.fail("No view for this result");return}
  B.status("Loading the "+model.view+" view…");
  adopt("ui://opendata-mcp/"+model.view+".html",r).catch(function(x){B.plain(x.message+"\n\n"+B.text(r))})});
B.start("opendata-mcp");
`;

/** The router view document. */
export function routerHtml(): string {
  return page("Result", "", BODY, SCRIPT);
}
