// The part every view shares: a small JSON-RPC-over-postMessage client for the MCP Apps host
// bridge (ui/initialize, tool input and result notifications, tools/call and ui/open-link back
// through the host, size changes), DOM helpers and the base style. Plain browser JavaScript kept
// as text: each view is one self-contained HTML document, no script or style loaded from
// anywhere. No `${` in these strings: they are raw template literals.

/**
 * The base style: the host's theme variables (MCP Apps theming) with fallbacks for light and dark.
 * `light-dark()` follows `color-scheme`: the host's `theme` pins it, else the system's preference.
 * `--room` is the height the host gives (`containerDimensions`, or the screen in fullscreen).
 */
export const BASE_CSS = String.raw`
:root{color-scheme:light dark;--bg:var(--color-background-primary,light-dark(#fff,#17181b));--fg:var(--color-text-primary,light-dark(#1b1b1f,#eceef1));
--mut:var(--color-text-secondary,light-dark(#5f6368,#a2a7ae));--line:var(--color-border-primary,light-dark(#d6d8dc,#3a3d42));--acc:light-dark(#1f6feb,#6ea8fe);
font:13px/1.4 var(--font-sans,system-ui,-apple-system,"Segoe UI",sans-serif);background:var(--bg)}
[data-theme=dark]{color-scheme:dark}[data-theme=light]{color-scheme:light}[data-mode=fullscreen]{--room:100vh;--max:4000px}
body{margin:0;padding:10px;background:var(--bg);color:var(--fg);max-width:var(--vw,none)}
h1{font-size:15px;margin:0 0 6px}a{color:var(--acc)}
button{font:inherit;padding:3px 9px;border:1px solid var(--line);border-radius:6px;background:transparent;color:var(--fg);cursor:pointer}
button:disabled{opacity:.5;cursor:default}#fs{float:right}[hidden]{display:none!important}
.mut{color:var(--mut)}.row{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:6px 0}
.foot{margin-top:8px;font-size:11px;color:var(--mut)}
.err{color:#c62828;white-space:pre-wrap}
pre{white-space:pre-wrap;font-size:12px}
`;

/**
 * The host bridge and helpers: `B.start(name)` does the handshake, `B.on(kind, fn)` receives
 * each view model (from the tool result and from later calls), `B.call(args)` calls the same
 * tool again through the host (through opendata_call when the result came that way), `el(...)`
 * builds DOM nodes (text is never parsed as HTML). `B.stop()` lets another view of this server
 * take the frame over (the router view does): the new document finds the connection and the
 * result in `ODM_HANDOFF` and needs no second handshake.
 */
export const BRIDGE_JS = String.raw`
"use strict";
var META="opendata-mcp/view";
function $(i){return document.getElementById(i)}
function el(tag,attrs){var n=document.createElementNS(/^(svg|path|circle|line|rect|text|g|image|polygon|polyline|title)$/.test(tag)?"http://www.w3.org/2000/svg":"http://www.w3.org/1999/xhtml",tag);
for(var k in attrs||{}){var v=attrs[k];if(v===null||v===undefined||v===false)continue;if(k==="text")n.textContent=String(v);else if(k.slice(0,2)==="on")n.addEventListener(k.slice(2),v);else n.setAttribute(k,String(v));}
for(var i=2;i<arguments.length;i++){var c=arguments[i];if(c===null||c===undefined||c===false)continue;n.appendChild(typeof c==="object"?c:document.createTextNode(String(c)));}return n}
function link(url,text,cls){return typeof url==="string"&&/^https?:\/\//i.test(url)?el("a",{class:cls,href:url,text:text}):el("span",{class:cls,text:text})}
function fmt(v){if(v===null||v===undefined||isNaN(v))return "–";var a=Math.abs(v);if(a>=1e15)return v.toExponential(3).replace("e+","e");return v.toLocaleString("en-US",{maximumFractionDigits:a>=1000?0:a>=10?2:4})}
var B=(()=>{var seq=0,pending={},tool=null,via=null,on=null,host={},ro=null,D=document.documentElement;
function send(m){window.parent.postMessage(m,"*")}
function req(method,params){return new Promise((ok,fail)=>{var id=++seq;pending[id]=[ok,fail];send({jsonrpc:"2.0",id:id,method:method,params:params})})}
function note(method,params){send({jsonrpc:"2.0",method:method,params:params||{}})}
function cap(k){return !!(host.hostCapabilities&&host.hostCapabilities[k])}
function text(r){return ((r&&r.content)||[]).filter(c=>c.type==="text").map(c=>c.text).join("\n")}
function take(r){var m=r&&r._meta&&r._meta[META];if(r&&r.isError)throw new Error(text(r)||"The call failed");if(!m)throw new Error(text(r)||"No data for this view");if(m.tool)tool=m.tool;via=m.via||null;return m}
function px(n){return typeof n==="number"&&n>0?n+"px":null}
function prop(k,v){if(v)D.style.setProperty(k,v);else D.style.removeProperty(k)}
function context(c){if(!c)return;host.hostContext=Object.assign(host.hostContext||{},c);if(c.theme)D.dataset.theme=c.theme;
var vars=c.styles&&c.styles.variables||{};for(var k in vars)if(/^--[\w-]+$/.test(k))prop(k,typeof vars[k]==="string"?vars[k]:null);
if(c.displayMode)D.dataset.mode=c.displayMode;var d=c.containerDimensions;if(d){prop("--room",px(d.height||d.maxHeight));prop("--max",d.height?"4000px":null);prop("--vw",px(d.width||d.maxWidth))}
var fs=$("fs");if(fs)fs.textContent=D.dataset.mode==="fullscreen"?"Exit full screen":"Full screen";
window.dispatchEvent(new Event("resize"))}
function result(r){if(!r.isError&&!(r._meta&&r._meta[META])){plain(text(r));return}var model;try{model=take(r)}catch(x){fail(x.message);return}on&&on(model,r)}
function listen(e){if(e.source!==window.parent)return;var m=e.data;if(!m||m.jsonrpc!=="2.0")return;
if(m.method===undefined&&m.id!==undefined){var p=pending[m.id];if(!p)return;delete pending[m.id];if(m.error)p[1](new Error(m.error.message||"Host error"));else p[0](m.result);return}
if(m.id!==undefined){send({jsonrpc:"2.0",id:m.id,result:{}});return}
if(m.method==="ui/notifications/tool-result")result(m.params||{});
else if(m.method==="ui/notifications/tool-cancelled")fail("The call was cancelled"+(m.params&&m.params.reason?": "+m.params.reason:""))
else if(m.method==="ui/notifications/host-context-changed")context(m.params)}
window.addEventListener("message",listen);
function plain(msg){var n=$("status");if(n){n.className="";n.textContent="";n.appendChild(el("pre",{text:msg}))}}
function fail(msg){var n=$("status");if(n){n.className="err";n.textContent=msg}}
D.addEventListener("click",e=>{var a=e.target&&e.target.closest&&e.target.closest("a[href]");if(!a)return;e.preventDefault();req("ui/open-link",{url:a.href}).catch(()=>{})});
function ready(){var c=host.hostContext||{};host.hostContext={};context(c);
if((c.availableDisplayModes||[]).indexOf("fullscreen")>=0){var b=el("button",{id:"fs",onclick:()=>{req("ui/request-display-mode",{mode:D.dataset.mode==="fullscreen"?"inline":"fullscreen"}).then(r=>{context({displayMode:r&&r.mode})},()=>{})}});document.body.insertBefore(b,document.body.firstChild);context({})}
var last=0;ro=new ResizeObserver(()=>{var h=Math.ceil(D.getBoundingClientRect().height);if(h!==last){last=h;note("ui/notifications/size-changed",{height:h})}});ro.observe(document.body)}
var H=window.ODM_HANDOFF;window.ODM_HANDOFF=null;
return{
start:name=>{if(H){seq=H.seq;host=H.host;ready();result(H.result);return Promise.resolve()}
return req("ui/initialize",{appInfo:{name:name,version:"1"},appCapabilities:{availableDisplayModes:["inline","fullscreen"]},protocolVersion:"2026-01-26"}).then(r=>{host=r||{};ready();note("ui/notifications/initialized")})},
on:fn=>{on=fn},
canCall:()=>!!tool&&cap("serverTools"),cap:cap,req:req,
call:args=>{return req("tools/call",via?{name:via,arguments:{tool:tool,arguments:JSON.stringify(args)}}:{name:tool,arguments:args}).then(take)},
stop:()=>{window.removeEventListener("message",listen);ro&&ro.disconnect();return{seq:seq,host:host}},
plain:plain,fail:fail,text:text,
status:msg=>{var n=$("status");if(n){n.className="mut";n.textContent=msg}}}})();
`;

/** One view as a complete HTML5 document. */
export function page(title: string, css: string, body: string, script: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style>${BASE_CSS}${css}</style></head><body>${body}<script>${BRIDGE_JS}${script}</script></body></html>`;
}
