// The series view: one or more time series as lines on an SVG chart, with units, frequency, the
// latest value, source and licence, a zoomable range, and earlier observations or the next page
// loaded by calling the tool again through the host.
import { page } from "./_common.ts";

const CSS = String.raw`
#chart{width:100%;height:280px;display:block;touch-action:none;user-select:none}
.ax{stroke:var(--line)}.tick{fill:var(--mut);font-size:10px}.grid{stroke:var(--line);stroke-dasharray:2 3;opacity:.6}
.ln{fill:none;stroke-width:1.6}.pt{stroke:none}
#legend{display:grid;gap:4px;margin:6px 0}.lg{display:flex;gap:6px;align-items:baseline;flex-wrap:wrap}
.sw{width:10px;height:10px;border-radius:2px;display:inline-block}.latest{font-weight:600}
input[type=range]{width:140px}
`;

const BODY = String.raw`<h1 id="title">Series</h1><div id="status" class="mut">Waiting for data…</div>
<div id="legend"></div><svg id="chart" role="img" aria-label="Line chart"></svg>
<div class="row"><label class="mut">From <input id="r0" type="range" min="0" max="1000" value="0"></label>
<label class="mut">to <input id="r1" type="range" min="0" max="1000" value="1000"></label>
<span id="range" class="mut"></span><button id="reset">Whole range</button>
<label class="mut"><input id="rebase" type="checkbox"> Rebase to 100</label></div>
<div class="row"><button id="earlier" hidden>Load earlier data</button><button id="next" hidden>Next page</button></div>
<div id="foot" class="foot"></div>`;

// Ticks stop at 50, and when a step is below the float's precision at upstream values that are
// huge and close (1e20 and the next float): the loop would otherwise never advance.
const SCRIPT = String.raw`
var COLORS=["#1f77b4","#d62728","#2ca02c","#9467bd","#ff7f0e","#17becf","#8c564b","#e377c2"];
var S={series:[],model:null,lo:0,hi:1000};
function t(d){return Date.parse(d.length===4?d+"-01-01":d.length===7?d+"-01":d)}
function merge(model,details){
  if(!details)S.model=model;
  model.series.forEach(function(s){var old=S.series.find(function(o){return o.id===s.id});
    if(!old){if(!details)S.series.push({id:s.id,name:s.name,units:s.units,frequency:s.frequency,points:s.points.slice()});return}
    if(s.name&&s.name!==s.id)old.name=s.name;if(s.units&&!old.units)old.units=s.units;if(s.frequency)old.frequency=s.frequency;
    var seen={};old.points.forEach(function(p){seen[p[0]]=p});s.points.forEach(function(p){seen[p[0]]=p});
    old.points=Object.keys(seen).sort(function(a,b){return t(a)-t(b)}).map(function(k){return seen[k]})});
  draw();
}
function domain(){var a=Infinity,b=-Infinity;S.series.forEach(function(s){s.points.forEach(function(p){var x=t(p[0]);if(x<a)a=x;if(x>b)b=x})});return[a,b]}
function niceTicks(a,b,n){if(!(b>a)){return[a]}var step=Math.pow(10,Math.floor(Math.log10((b-a)/n)));var err=(b-a)/n/step;step*=err>=7.5?10:err>=3.5?5:err>=1.5?2:1;
  var out=[];for(var v=Math.ceil(a/step)*step;v<=b+step*1e-9&&out.length<50;v+=step){out.push(v);if(v+step===v)break}return out}
function draw(){
  var svg=document.getElementById("chart");while(svg.firstChild)svg.removeChild(svg.firstChild);
  var legend=document.getElementById("legend");legend.textContent="";
  var m=S.model;document.getElementById("title").textContent=S.series.length===1?S.series[0].name:S.series.length+" series";
  B.status(S.series.reduce(function(n,s){return n+s.points.length},0)+" observations");
  var W=svg.clientWidth||600,H=svg.clientHeight||280,L=56,R=10,T=8,Bm=22;
  var d=domain();if(!isFinite(d[0]))return;var span=d[1]-d[0]||1;
  var x0=d[0]+span*S.lo/1000,x1=d[0]+span*S.hi/1000;if(x1<=x0)x1=x0+1;
  document.getElementById("range").textContent=new Date(x0).toISOString().slice(0,10)+" – "+new Date(x1).toISOString().slice(0,10);
  var rebase=document.getElementById("rebase").checked;
  var vis=S.series.map(function(s){var base=null;return s.points.filter(function(p){var x=t(p[0]);return x>=x0&&x<=x1}).map(function(p){
    var v=p[1];if(rebase&&v!==null){if(base===null)base=v||1;v=v/base*100}return[t(p[0]),v]})});
  var y0=Infinity,y1=-Infinity;vis.forEach(function(ps){ps.forEach(function(p){if(p[1]!==null){if(p[1]<y0)y0=p[1];if(p[1]>y1)y1=p[1]}})});
  if(!isFinite(y0)){y0=0;y1=1}if(y1===y0){y0-=1;y1+=1}var pad=(y1-y0)*0.05;y0-=pad;y1+=pad;
  function X(v){return L+(v-x0)/(x1-x0)*(W-L-R)}function Y(v){return T+(y1-v)/(y1-y0)*(H-T-Bm)}
  niceTicks(y0,y1,5).forEach(function(v){svg.appendChild(el("line",{class:"grid",x1:L,x2:W-R,y1:Y(v),y2:Y(v)}));
    svg.appendChild(el("text",{class:"tick",x:L-4,y:Y(v)+3,"text-anchor":"end",text:fmt(v)}))});
  var years=(x1-x0)/31557600000;niceTicks(years>2?new Date(x0).getUTCFullYear():x0,years>2?new Date(x1).getUTCFullYear():x1,6).forEach(function(v){
    var x=years>2?Date.UTC(v,0,1):v;if(x<x0||x>x1)return;svg.appendChild(el("line",{class:"ax",x1:X(x),x2:X(x),y1:H-Bm,y2:H-Bm+4}));
    svg.appendChild(el("text",{class:"tick",x:X(x),y:H-6,"text-anchor":"middle",text:years>2?String(v):new Date(x).toISOString().slice(0,10)}))});
  svg.appendChild(el("line",{class:"ax",x1:L,x2:W-R,y1:H-Bm,y2:H-Bm}));
  vis.forEach(function(ps,i){var c=COLORS[i%COLORS.length],dd="",up=false;var g=el("g",{"data-series":S.series[i].id});
    ps.forEach(function(p){if(p[1]===null){up=false;return}dd+=(up?"L":"M")+X(p[0]).toFixed(1)+" "+Y(p[1]).toFixed(1);up=true});
    g.appendChild(el("path",{class:"ln",d:dd,stroke:c}));
    ps.forEach(function(p){if(p[1]!==null)g.appendChild(el("circle",{class:"pt",cx:X(p[0]).toFixed(1),cy:Y(p[1]).toFixed(1),r:ps.length>400?1:2,fill:c},
      el("title",{text:new Date(p[0]).toISOString().slice(0,10)+": "+fmt(p[1])})))});svg.appendChild(g)});
  S.series.forEach(function(s,i){var last=null;for(var k=s.points.length-1;k>=0;k--)if(s.points[k][1]!==null){last=s.points[k];break}
    legend.appendChild(el("div",{class:"lg","data-series":s.id},el("span",{class:"sw",style:"background:"+COLORS[i%COLORS.length]}),
      el("b",{text:s.name}),el("span",{class:"mut",text:"("+s.id+")"}),s.units?el("span",{class:"mut",text:s.units}):null,
      s.frequency?el("span",{class:"mut",text:s.frequency}):null,
      el("span",{text:"latest"}),el("span",{class:"latest",text:last?fmt(last[1])+" ("+last[0]+")":"–"})))});
  var foot=document.getElementById("foot");foot.textContent="";
  foot.appendChild(el("span",{text:"Source: "}));foot.appendChild(link(m.source.url,m.source.name));
  foot.appendChild(el("span",{text:" · "+m.licence}));
  var e=document.getElementById("earlier");e.hidden=!(m.earlier&&B.canCall());var n=document.getElementById("next");n.hidden=!(m.next&&B.canCall());
}
function more(args,btn){btn.disabled=true;B.status("Loading…");B.call(args).then(function(mod){btn.disabled=false;merge(mod)},function(x){btn.disabled=false;B.fail(x.message)})}
document.getElementById("earlier").onclick=function(){more(S.model.earlier,this)};
document.getElementById("next").onclick=function(){more(S.model.next,this)};
document.getElementById("r0").oninput=function(){S.lo=Math.min(+this.value,S.hi-1);draw()};
document.getElementById("r1").oninput=function(){S.hi=Math.max(+this.value,S.lo+1);draw()};
document.getElementById("rebase").onchange=draw;
document.getElementById("reset").onclick=function(){S.lo=0;S.hi=1000;document.getElementById("r0").value=0;document.getElementById("r1").value=1000;draw()};
document.getElementById("chart").addEventListener("wheel",function(e){e.preventDefault();var w=S.hi-S.lo,c=S.lo+w*(e.offsetX/this.clientWidth),k=e.deltaY<0?0.8:1.25;
  S.lo=Math.max(0,Math.round(c-(c-S.lo)*k));S.hi=Math.min(1000,Math.round(c+(S.hi-c)*k));if(S.hi-S.lo<2)S.hi=S.lo+2;
  document.getElementById("r0").value=S.lo;document.getElementById("r1").value=S.hi;draw()},{passive:false});
window.addEventListener("resize",function(){if(S.model)draw()});
B.on(function(model){S.series=[];merge(model);
  if(model.details&&B.canCall())B.call(model.details).then(function(d){merge(d,true)},function(){})});B.start("opendata-mcp series");
`;

/** The series view document. */
export function seriesHtml(): string {
  return page("Series", CSS, BODY, SCRIPT);
}
