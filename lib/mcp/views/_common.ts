// The part every view shares: a small JSON-RPC-over-postMessage client for the MCP Apps host
// bridge (ui/initialize, tool input and result notifications, tools/call and ui/open-link back
// through the host, size changes), DOM helpers and the base style. Plain browser JavaScript kept
// as text: each view is one self-contained HTML document, no script or style loaded from
// anywhere. No `${` in these strings: they are raw template literals.

/** The base style: host theme variables (MCP Apps theming) with fallbacks, light and dark. */
export const BASE_CSS = String.raw`
:root{color-scheme:light dark;--bg:var(--color-background-primary,#fff);--fg:var(--color-text-primary,#1b1b1f);
--mut:var(--color-text-secondary,#5f6368);--line:var(--color-border-primary,#d6d8dc);--acc:#1f6feb;
font:13px/1.4 var(--font-sans,system-ui,-apple-system,"Segoe UI",sans-serif)}
[data-theme=dark]{--bg:var(--color-background-primary,#17181b);--fg:var(--color-text-primary,#eceef1);
--mut:var(--color-text-secondary,#a2a7ae);--line:var(--color-border-primary,#3a3d42);--acc:#6ea8fe}
body{margin:0;padding:10px;background:var(--bg);color:var(--fg)}
h1{font-size:15px;margin:0 0 6px}a{color:var(--acc)}
button{font:inherit;padding:3px 9px;border:1px solid var(--line);border-radius:6px;background:transparent;color:var(--fg);cursor:pointer}
button:disabled{opacity:.5;cursor:default}
.mut{color:var(--mut)}.row{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:6px 0}
.foot{margin-top:8px;font-size:11px;color:var(--mut)}
.err{color:#c62828;white-space:pre-wrap}
pre{white-space:pre-wrap;font-size:12px}
`;

/**
 * The host bridge and helpers: `B.start(name)` does the handshake, `B.on(kind, fn)` receives
 * each view model (from the tool result and from later calls), `B.call(args)` calls the same
 * tool again through the host, `el(...)` builds DOM nodes (text is never parsed as HTML).
 */
export const BRIDGE_JS = String.raw`
"use strict";
var META="opendata-mcp/view";
function el(tag,attrs){var n=document.createElementNS(/^(svg|path|circle|line|rect|text|g|image|polygon|polyline|title)$/.test(tag)?"http://www.w3.org/2000/svg":"http://www.w3.org/1999/xhtml",tag);
for(var k in attrs||{}){var v=attrs[k];if(v===null||v===undefined||v===false)continue;if(k==="text")n.textContent=String(v);else if(k.slice(0,2)==="on")n.addEventListener(k.slice(2),v);else n.setAttribute(k,String(v));}
for(var i=2;i<arguments.length;i++){var c=arguments[i];if(c===null||c===undefined||c===false)continue;n.appendChild(typeof c==="object"?c:document.createTextNode(String(c)));}return n}
function link(url,text,cls){return typeof url==="string"&&/^https?:\/\//i.test(url)?el("a",{class:cls,href:url,text:text}):el("span",{class:cls,text:text})}
function fmt(v){if(v===null||v===undefined||isNaN(v))return "–";var a=Math.abs(v);return v.toLocaleString("en-US",{maximumFractionDigits:a>=1000?0:a>=10?2:4})}
var B=(function(){var seq=0,pending={},tool=null,on=null,host={};
function send(m){window.parent.postMessage(m,"*")}
function req(method,params){return new Promise(function(ok,fail){var id=++seq;pending[id]=[ok,fail];send({jsonrpc:"2.0",id:id,method:method,params:params})})}
function note(method,params){send({jsonrpc:"2.0",method:method,params:params||{}})}
function text(r){return ((r&&r.content)||[]).filter(function(c){return c.type==="text"}).map(function(c){return c.text}).join("\n")}
function take(r){var m=r&&r._meta&&r._meta[META];if(r&&r.isError)throw new Error(text(r)||"The call failed");if(!m)throw new Error(text(r)||"No data for this view");if(m.tool)tool=m.tool;return m}
window.addEventListener("message",function(e){if(e.source!==window.parent)return;var m=e.data;if(!m||m.jsonrpc!=="2.0")return;
if(m.method===undefined&&m.id!==undefined){var p=pending[m.id];if(!p)return;delete pending[m.id];if(m.error)p[1](new Error(m.error.message||"Host error"));else p[0](m.result);return}
if(m.id!==undefined){send({jsonrpc:"2.0",id:m.id,result:{}});return}
if(m.method==="ui/notifications/tool-result"){var r=m.params||{};if(!r.isError&&!(r._meta&&r._meta[META])){plain(text(r));return}var model;try{model=take(r)}catch(x){fail(x.message);return}on&&on(model,false)}
else if(m.method==="ui/notifications/tool-cancelled")fail("The call was cancelled"+(m.params&&m.params.reason?": "+m.params.reason:""))
else if(m.method==="ui/notifications/host-context-changed"&&m.params&&m.params.theme)document.documentElement.dataset.theme=m.params.theme});
function plain(msg){var n=document.getElementById("status");if(n){n.className="";n.textContent="";n.appendChild(el("pre",{text:msg}))}}
function fail(msg){var n=document.getElementById("status");if(n){n.className="err";n.textContent=msg}}
document.addEventListener("click",function(e){var a=e.target&&e.target.closest&&e.target.closest("a[href]");if(!a)return;e.preventDefault();req("ui/open-link",{url:a.href}).catch(function(){})});
return{
start:function(name){return req("ui/initialize",{appInfo:{name:name,version:"1"},appCapabilities:{availableDisplayModes:["inline"]},protocolVersion:"2026-01-26"}).then(function(r){host=r||{};var c=host.hostContext||{};
if(c.theme)document.documentElement.dataset.theme=c.theme;var vars=c.styles&&c.styles.variables||{};for(var k in vars)if(vars[k])document.documentElement.style.setProperty(k,vars[k]);
note("ui/notifications/initialized");var last=0;new ResizeObserver(function(){var h=Math.ceil(document.documentElement.getBoundingClientRect().height);if(h!==last){last=h;note("ui/notifications/size-changed",{height:h})}}).observe(document.body)})},
on:function(fn){on=fn},
canCall:function(){return !!tool&&!!(host.hostCapabilities&&host.hostCapabilities.serverTools)},
call:function(args){return req("tools/call",{name:tool,arguments:args}).then(take)},
fail:fail,
status:function(msg){var n=document.getElementById("status");if(n){n.className="mut";n.textContent=msg}}}})();
`;

/** One view as a complete HTML5 document. */
export function page(title: string, css: string, body: string, script: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style>${BASE_CSS}${css}</style></head><body>${body}<script>${BRIDGE_JS}${script}</script></body></html>`;
}
