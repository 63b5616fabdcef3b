// The places view: features as markers with popups on a Web Mercator SVG map, the searched bbox
// or circle drawn, a graticule with labels (so the map reads without tiles), map tiles under it
// when a tile server is configured and the host's CSP lets them load, and the next page loaded
// by calling the tool again through the host.
import { page } from "./_common.ts";

const CSS = String.raw`
#wrap{position:relative}#map{width:100%;height:clamp(160px,calc(var(--room,530px) - 190px),var(--max,340px));display:block;background:var(--color-background-secondary,light-dark(#eef2f5,#1f2328));border:1px solid var(--line);border-radius:6px}
.gr{stroke:#8a94a0;stroke-width:.6;opacity:.55}.gl{fill:var(--mut);font-size:9px}
.area{fill:rgba(31,111,235,.08);stroke:#1f6feb;stroke-width:1.5;stroke-dasharray:5 3}
.marker{fill:#d62728;stroke:#fff;stroke-width:1.5;cursor:pointer}.marker.on{fill:#ff7f0e}
#pop{position:absolute;max-width:260px;background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:6px;padding:6px 8px;box-shadow:0 2px 8px rgba(0,0,0,.2);font-size:12px}
#pop b{display:block}#list{margin:6px 0;padding-left:20px;max-height:160px;overflow:auto}#list li{cursor:pointer}
`;

const BODY = String.raw`<h1 id="title">Places</h1><div id="status" class="mut">Waiting for data…</div>
<div id="wrap"><svg id="map" role="img" aria-label="Map"></svg><div id="pop" hidden></div></div>
<div class="row"><button id="zin" aria-label="Zoom in">+</button><button id="zout" aria-label="Zoom out">−</button><button id="fit">Fit</button>
<button id="next" hidden>Next page</button><span id="count" class="mut"></span></div>
<ol id="list"></ol><div id="foot" class="foot"></div>`;

// A coordinate off the globe (finite but huge, from upstream) is listed without a location: drawn,
// the graticule and tile loops would step by less than a float's precision and never end.
const SCRIPT = String.raw`
var S={places:[],model:null,z:null,c:null,sel:null};
function wx(lon,z){return (lon+180)/360*256*Math.pow(2,z)}
function wy(lat,z){var r=Math.max(-85.05,Math.min(85.05,lat))*Math.PI/180;return (1-Math.log(Math.tan(r)+1/Math.cos(r))/Math.PI)/2*256*Math.pow(2,z)}
function lonOf(x,z){return x/(256*Math.pow(2,z))*360-180}
function latOf(y,z){var n=Math.PI-2*Math.PI*y/(256*Math.pow(2,z));return 180/Math.PI*Math.atan(Math.sinh(n))}
function circlePts(c){var out=[];for(var i=0;i<=64;i++){var a=i/64*2*Math.PI;out.push([c.lon+c.radius_m*Math.sin(a)/(111320*Math.cos(c.lat*Math.PI/180)),c.lat+c.radius_m*Math.cos(a)/110540])}return out}
function bounds(){var b=[Infinity,Infinity,-Infinity,-Infinity];function add(lon,lat){b[0]=Math.min(b[0],lon);b[1]=Math.min(b[1],lat);b[2]=Math.max(b[2],lon);b[3]=Math.max(b[3],lat)}
  var m=S.model;if(m.bbox){add(m.bbox[0],m.bbox[1]);add(m.bbox[2],m.bbox[3])}if(m.circle)circlePts(m.circle).forEach(function(p){add(p[0],p[1])});
  S.places.forEach(function(p){if(p.lat!==null&&p.lon!==null)add(p.lon,p.lat)});if(!isFinite(b[0]))return[-10,35,30,70];
  if(b[2]-b[0]<0.002){b[0]-=0.001;b[2]+=0.001}if(b[3]-b[1]<0.002){b[1]-=0.001;b[3]+=0.001}return b}
function fit(){var svg=$("map"),W=svg.clientWidth||600,H=svg.clientHeight||340,b=bounds(),z=18;
  while(z>1&&(wx(b[2],z)-wx(b[0],z)>W-40||wy(b[1],z)-wy(b[3],z)>H-40))z--;S.z=z;S.c=[(b[0]+b[2])/2,(b[1]+b[3])/2];draw()}
function step(span){var s=[0.0005,0.001,0.002,0.005,0.01,0.02,0.05,0.1,0.2,0.5,1,2,5,10,15,30];for(var i=0;i<s.length;i++)if(span/s[i]<=6)return s[i];return 30}
function draw(){var svg=$("map");while(svg.firstChild)svg.removeChild(svg.firstChild);
  var W=svg.clientWidth||600,H=svg.clientHeight||340,z=S.z,ox=wx(S.c[0],z)-W/2,oy=wy(S.c[1],z)-H/2;
  function P(lon,lat){return[wx(lon,z)-ox,wy(lat,z)-oy]}
  if(TILES){var n=Math.pow(2,z),g=el("g",{class:"tiles"});for(var tx=Math.floor(ox/256);tx<=Math.floor((ox+W)/256);tx++)for(var ty=Math.max(0,Math.floor(oy/256));ty<=Math.min(n-1,Math.floor((oy+H)/256));ty++){
    var img=el("image",{href:TILES.replace("{z}",z).replace("{x}",((tx%n)+n)%n).replace("{y}",ty),x:tx*256-ox,y:ty*256-oy,width:256,height:256});
    img.addEventListener("error",function(){this.remove()});g.appendChild(img)}svg.appendChild(g)}
  var west=lonOf(ox,z),east=lonOf(ox+W,z),north=latOf(oy,z),south=latOf(oy+H,z),s=step(east-west),t=step(north-south);
  for(var lo=Math.ceil(west/s)*s;lo<=east;lo+=s){var x=P(lo,0)[0];svg.appendChild(el("line",{class:"gr",x1:x,x2:x,y1:0,y2:H}));svg.appendChild(el("text",{class:"gl",x:x+2,y:H-3,text:+lo.toFixed(4)+"°"}))}
  for(var la=Math.ceil(south/t)*t;la<=north;la+=t){var y=P(0,la)[1];svg.appendChild(el("line",{class:"gr",x1:0,x2:W,y1:y,y2:y}));svg.appendChild(el("text",{class:"gl",x:2,y:y-2,text:+la.toFixed(4)+"°"}))}
  var m=S.model;if(m.bbox){var a=P(m.bbox[0],m.bbox[3]),c=P(m.bbox[2],m.bbox[1]);svg.appendChild(el("rect",{class:"area",x:a[0],y:a[1],width:c[0]-a[0],height:c[1]-a[1]}))}
  if(m.circle)svg.appendChild(el("polygon",{class:"area",points:circlePts(m.circle).map(function(p){return P(p[0],p[1]).join(",")}).join(" ")}));
  S.places.forEach(function(p,i){if(p.lat===null||p.lon===null)return;var q=P(p.lon,p.lat);
    svg.appendChild(el("circle",{class:"marker"+(S.sel===i?" on":""),cx:q[0].toFixed(1),cy:q[1].toFixed(1),r:6,"data-i":i,onclick:function(){popup(i)}},el("title",{text:p.name})))});
  if(S.sel!==null)popup(S.sel)}
function popup(i){var p=S.places[i],box=$("pop");S.sel=i;box.textContent="";box.appendChild(el("b",{text:p.name}));
  p.lines.forEach(function(l){box.appendChild(el("div",{class:"mut",text:l}))});if(p.url)box.appendChild(link(p.url,"Open"));
  if(p.lat===null||p.lon===null){box.appendChild(el("div",{class:"mut",text:"No location"}));box.style.left="8px";box.style.top="8px"}
  else{var svg=$("map"),W=svg.clientWidth||600,H=svg.clientHeight||340,x=wx(p.lon,S.z)-wx(S.c[0],S.z)+W/2,y=wy(p.lat,S.z)-wy(S.c[1],S.z)+H/2;
    box.style.left=Math.max(0,Math.min(W-200,x+8))+"px";box.style.top=Math.max(0,Math.min(H-60,y+8))+"px"}
  box.hidden=false;document.querySelectorAll(".marker").forEach(function(n){n.classList.toggle("on",+n.getAttribute("data-i")===i)})}
function onGlobe(lat,lon){return typeof lat==="number"&&typeof lon==="number"&&Math.abs(lat)<=90&&Math.abs(lon)<=180}
function show(model,add){var b=model.bbox,c=model.circle;if(b&&!(onGlobe(b[1],b[0])&&onGlobe(b[3],b[2])))model.bbox=null;
  if(c&&!(onGlobe(c.lat,c.lon)&&c.radius_m>0&&c.radius_m<=2e7))model.circle=null;
  var ps=model.places.map(function(p){return onGlobe(p.lat,p.lon)?p:Object.assign({},p,{lat:null,lon:null})});
  S.model=model;S.places=add?S.places.concat(ps):ps;S.sel=null;$("pop").hidden=true;
  var located=S.places.filter(function(p){return p.lat!==null&&p.lon!==null}).length;
  $("title").textContent=S.places.length+" place"+(S.places.length===1?"":"s");
  B.status(located+" on the map"+(S.places.length>located?", "+(S.places.length-located)+" without a location":""));
  $("count").textContent=model.total!=null?S.places.length+" of "+model.total:"";
  var list=$("list");list.textContent="";S.places.forEach(function(p,i){list.appendChild(el("li",{onclick:function(){popup(i)},text:p.name}))});
  var foot=$("foot");foot.textContent="";foot.appendChild(el("span",{text:"Source: "}));
  foot.appendChild(link(model.source.url,model.source.name));
  foot.appendChild(el("span",{text:" · "+model.licence+(TILES?" · Map tiles: "+TILE_CREDIT:"")}));
  $("next").hidden=!(model.next&&B.canCall());fit()}
$("zin").onclick=function(){if(S.z<19){S.z++;draw()}};
$("zout").onclick=function(){if(S.z>1){S.z--;draw()}};
$("fit").onclick=function(){fit()};
$("next").onclick=function(){var b=this;b.disabled=true;B.status("Loading…");B.call(S.model.next).then(function(m){b.disabled=false;show(m,true)},function(x){b.disabled=false;B.fail(x.message)})};
window.addEventListener("resize",function(){if(S.model)draw()});
B.on(function(model){show(model,false)});B.start("opendata-mcp places");
`;

/** Options of {@linkcode placesHtml}. */
export interface PlacesHtmlOptions {
  /** `https://…/{z}/{x}/{y}.png`; null: no tiles. */
  tilesUrl: string | null;
}

/** The places view document, with the tile template (or none) written in. */
export function placesHtml(options: PlacesHtmlOptions): string {
  const tiles = options.tilesUrl;
  const credit = tiles === null
    ? ""
    : /openstreetmap\.org/.test(tiles)
    ? "© OpenStreetMap contributors"
    : new URL(tiles.replace(/[{}]/g, "")).host;
  // JSON inside a script: "<" escaped so no value can close the script element.
  const js = (v: unknown) => JSON.stringify(v).replace(/</g, "\\u003c");
  return page("Places", CSS, BODY, `var TILES=${js(tiles)},TILE_CREDIT=${js(credit)};${SCRIPT}`);
}
