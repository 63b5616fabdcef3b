// The series view: one or more time series as lines on an SVG chart, with units, frequency, the
// latest value, source and licence, a zoomable range, and earlier observations or the next page
// loaded by calling the tool again through the host.
import { page } from "./_common.ts";

const CSS = String.raw`
#chart{width:100%;height:clamp(140px,calc(var(--room,470px) - 190px),var(--max,280px));display:block;touch-action:none;user-select:none}
.ax{stroke:var(--line)}.tick{fill:var(--mut);font-size:10px}.grid{stroke:var(--line);stroke-dasharray:2 3;opacity:.6}
.ln{fill:none;stroke-width:1.6}.pt{stroke:none}.unit{fill:var(--fg);font-size:11px;font-weight:600}.empty{fill:var(--mut);font-size:14px}
#legend{display:grid;gap:4px;margin:6px 0}.lg{display:flex;gap:6px;align-items:baseline;flex-wrap:wrap}
.sw{width:10px;height:10px;border-radius:2px;display:inline-block}.latest{font-weight:600}
input[type=range]{width:140px}
`;

const BODY = String.raw`<h1 id="title">Series</h1><div id="status" class="mut">Waiting for data…</div>
<div id="legend"></div><svg id="chart" role="img" aria-label="Line chart"></svg>
<div class="row" id="ctl"><label class="mut">From <input id="r0" type="range" min="0" max="1000" value="0"></label>
<label class="mut">to <input id="r1" type="range" min="0" max="1000" value="1000"></label>
<span id="range" class="mut"></span><button id="reset">Whole range</button>
<label class="mut"><input id="rebase" type="checkbox"> Rebase to 100</label></div>
<div class="row"><button id="earlier" hidden>Load earlier data</button><button id="next" hidden>Next page</button></div>
<div id="foot" class="foot"></div>`;

// Values are drawn divided by the power of ten of the axis' largest magnitude (ticks stay round),
// so no sum or difference of two values can overflow (1e300 and -1e300 draw; their difference is
// not a float). Ticks stop at 50, and
// when a step is below the float's precision (values huge and close): the loop would not advance.
// Series of different units get a panel each, with its own axis; tick labels are measured, and
// the axis made as wide as the widest, so no magnitude is cut off at the edge.
const SCRIPT = String.raw`
var COLORS=["#1f77b4","#d62728","#2ca02c","#9467bd","#ff7f0e","#17becf","#8c564b","#e377c2"];
var S={series:[],model:null,lo:0,hi:1000},DAY=864e5;
function t(d){return typeof d!=="string"?NaN:Date.parse(d.length===4?d+"-01-01":d.length===7?d+"-01":d)}
function good(p){return Array.isArray(p)&&isFinite(t(p[0]))&&(p[1]===null||typeof p[1]==="number"&&isFinite(p[1]))}
function iso(x,n){return new Date(x).toISOString().slice(0,n)}
function mu(t){return el("span",{class:"mut",text:t})}
function byDate(a,b){return t(a[0])-t(b[0])}
function merge(model,details){
  if(!details)S.model=model;
  (model.series||[]).forEach(s=>{var all=s.points||[],pts=all.filter(good).sort(byDate),bad=all.length-pts.length+(+s.dropped||0);
    var old=S.series.find(o=>o.id===s.id);
    if(!old){if(!details)S.series.push({id:s.id,name:s.name,units:s.units,frequency:s.frequency,points:pts,bad:bad});return}
    if(s.name&&s.name!==s.id)old.name=s.name;if(s.units&&!old.units)old.units=s.units;if(s.frequency)old.frequency=s.frequency;old.bad+=bad;
    var seen={};old.points.forEach(p=>{seen[p[0]]=p});pts.forEach(p=>{seen[p[0]]=p});
    old.points=Object.keys(seen).map(k=>seen[k]).sort(byDate)});
  draw();
}
function domain(){var a=Infinity,b=-Infinity;S.series.forEach(s=>{s.points.forEach(p=>{var x=t(p[0]);if(x<a)a=x;if(x>b)b=x})});return[a,b]}
function nice(x){var p=Math.pow(10,Math.floor(Math.log10(x))),e=x/p;return (e>=7.5?10:e>=3.5?5:e>=1.5?2:1)*p}
function yTicks(a,b,n){var s=nice((b-a)/n),out=[];for(var v=Math.ceil(a/s)*s;v<=b+s*1e-9&&out.length<50;v+=s){out.push(v);if(v+s===v)break}return{v:out,s:s}}
function cfmt(v,s,m){if(!isFinite(v))return "";if(Math.abs(v)<s*1e-6)return "0";
  if(m>=1e15||m<1e-4)return v.toExponential(Math.max(0,Math.min(6,Math.ceil(Math.log10(Math.abs(v)/s))))).replace("e+","e");
  var u=m>=1e12?[1e12,"T"]:m>=1e9?[1e9,"B"]:m>=1e6?[1e6,"M"]:m>=1e4?[1e3,"K"]:[1,""],d=Math.max(0,Math.min(6,-Math.floor(Math.log10(s/u[0])+1e-9)));
  return (v/u[0]).toLocaleString("en-US",{maximumFractionDigits:d,minimumFractionDigits:d})+u[1]}
function xTicks(x0,x1,n){var out=[],span=x1-x0,d0=new Date(x0),y0=d0.getUTCFullYear(),i,v;
  if(span>=n*365*DAY){var s=Math.max(1,nice(span/365.25/DAY/n));for(i=Math.ceil(y0/s)*s;(v=Date.UTC(i,0,1))<=x1&&out.length<60;i+=s)if(v>=x0)out.push([v,String(i)]);return out}
  if(span>=n*28*DAY){var ms=[1,2,3,6,12].find(k=>span/(k*30.44*DAY)<=n)||12;
    for(i=Math.ceil(d0.getUTCMonth()/ms)*ms;(v=Date.UTC(y0,i,1))<=x1&&out.length<60;i+=ms)if(v>=x0)out.push([v,iso(v,7)]);return out}
  var ds=[1,2,7,14].find(k=>span/(k*DAY)<=n)||14;for(v=Math.ceil(x0/DAY)*DAY;v<=x1&&out.length<60;v+=ds*DAY)out.push([v,iso(v,10)]);return out}
function tw(svg,s){var n=el("text",{class:"tick",text:s});svg.appendChild(n);var w=n.getComputedTextLength();svg.removeChild(n);return w}
function groups(){var g=[],at={};S.series.forEach((s,i)=>{var k=String(s.units||"").trim().toLowerCase();if(!(k in at)){at[k]=g.length;g.push({units:s.units||"",ids:[]})}g[at[k]].ids.push(i)});return g}
function foot(m){var f=$("foot");f.textContent="";f.appendChild(el("span",{text:"Source: "}));f.appendChild(link(m.source.url,m.source.name));f.appendChild(el("span",{text:" · "+m.licence}))}
function draw(){
  var svg=$("chart");while(svg.firstChild)svg.removeChild(svg.firstChild);
  var legend=$("legend");legend.textContent="";
  var m=S.model;var one=S.series.length===1&&S.series[0];$("title").textContent=one?one.name+(one.units?" ("+one.units+")":""):S.series.length+" series";
  foot(m);$("earlier").hidden=!(m.earlier&&B.canCall());$("next").hidden=!(m.next&&B.canCall());
  S.series.forEach((s,i)=>{var last=null;for(var k=s.points.length-1;k>=0;k--)if(s.points[k][1]!==null){last=s.points[k];break}
    legend.appendChild(el("div",{class:"lg","data-series":s.id},el("span",{class:"sw",style:"background:"+COLORS[i%COLORS.length]}),
      el("b",{text:s.name}),mu("("+s.id+")"),s.units?mu(s.units):null,
      s.frequency?mu(s.frequency):null,
      el("span",{text:"latest"}),el("span",{class:"latest",text:last?fmt(last[1])+" ("+last[0]+")":"–"})))});
  var bad=S.series.reduce((n,s)=>n+s.bad,0),notes=bad?[bad+" point"+(bad>1?"s":"")+" left out (a date or value that cannot be read)"]:[];
  var d=domain(),G=groups();$("ctl").hidden=!isFinite(d[0]);
  if(!isFinite(d[0])){svg.style.height="70px";B.status(["No observations in this answer"].concat(notes).join(" · "));
    svg.appendChild(el("text",{class:"empty",x:"50%",y:40,"text-anchor":"middle",text:"No data"}));return}
  if(G.length>1)notes.push("different units: one panel each");
  B.status([S.series.reduce((n,s)=>{return n+s.points.filter(p=>p[1]!==null).length},0)+" observations"].concat(notes).join(" · "));
  svg.style.height=G.length>2?G.length*110+40+"px":"";
  var W=svg.clientWidth||600,H=svg.clientHeight||280,R=10,T=8,Bm=22,gap=G.length>1?18:0,ph=(H-T-Bm-gap*(G.length-1))/G.length;
  var span=d[1]-d[0]||1,x0=d[0]+span*S.lo/1000,x1=d[0]+span*S.hi/1000;if(x1<=x0)x1=x0+1;
  $("range").textContent=iso(x0,10)+" – "+iso(x1,10);
  var rebase=$("rebase").checked;
  var vis=S.series.map(s=>{var base=null;return s.points.filter(p=>{var x=t(p[0]);return x>=x0&&x<=x1}).map(p=>{
    var v=p[1];if(rebase&&v!==null){if(base===null)base=v||1;v=v/base*100}return[t(p[0]),isFinite(v)?v:null]})});
  var own=[],P=G.map((g,j)=>{var lo=Infinity,hi=-Infinity;g.ids.forEach(i=>{own[i]=j;vis[i].forEach(p=>{if(p[1]!==null){if(p[1]<lo)lo=p[1];if(p[1]>hi)hi=p[1]}})});
    if(!isFinite(lo)){lo=0;hi=1}var k=Math.pow(10,Math.floor(Math.log10(Math.max(Math.abs(lo),Math.abs(hi))||1))),a=lo/k,b=hi/k;if(b-a<1e-9){a-=.5;b+=.5}else{var pad=(b-a)*.05;a-=pad;b+=pad}
    var tk=yTicks(a,b,Math.max(2,Math.round(ph/45))),mx=Math.max(Math.abs(a),Math.abs(b))*k;
    return{g:g,k:k,a:a,b:b,top:T+j*(ph+gap),ticks:tk.v.map(v=>{return[v,cfmt(v*k,tk.s*k,mx)]})}});
  var L=24;P.forEach(p=>{p.ticks.forEach(x=>{L=Math.max(L,tw(svg,x[1])+10)})});L=Math.min(L,W/2);
  function X(v){return L+(v-x0)/(x1-x0)*(W-L-R)}
  P.forEach(p=>{p.Y=v=>p.top+(p.b-v)/(p.b-p.a)*ph;
    p.ticks.forEach(x=>{var y=p.Y(x[0]);svg.appendChild(el("line",{class:"grid",x1:L,x2:W-R,y1:y,y2:y}));
      svg.appendChild(el("text",{class:"tick",x:L-4,y:y+3,"text-anchor":"end",text:x[1]}))});
    svg.appendChild(el("line",{class:"ax",x1:L,x2:W-R,y1:p.top+ph,y2:p.top+ph}));
    if(G.length>1)svg.appendChild(el("text",{class:"unit",x:L+4,y:p.top+10,text:p.g.units||"(no unit given)"}))});
  xTicks(x0,x1,Math.max(2,Math.floor((W-L-R)/90))).forEach(x=>{var w=tw(svg,x[1]),cx=Math.max(w/2+2,Math.min(W-w/2-2,X(x[0])));
    svg.appendChild(el("line",{class:"ax",x1:X(x[0]),x2:X(x[0]),y1:H-Bm,y2:H-Bm+4}));svg.appendChild(el("text",{class:"tick",x:cx,y:H-6,"text-anchor":"middle",text:x[1]}))});
  vis.forEach((ps,i)=>{var c=COLORS[i%COLORS.length],p=P[own[i]],dd="",up=false,g=el("g",{"data-series":S.series[i].id});
    function Y(v){return p.Y(v/p.k).toFixed(1)}
    ps.forEach(q=>{if(q[1]===null){up=false;return}dd+=(up?"L":"M")+X(q[0]).toFixed(1)+" "+Y(q[1]);up=true});
    g.appendChild(el("path",{class:"ln",d:dd,stroke:c}));
    ps.forEach(q=>{if(q[1]!==null)g.appendChild(el("circle",{class:"pt",cx:X(q[0]).toFixed(1),cy:Y(q[1]),r:ps.length>400?1:2,fill:c},
      el("title",{text:iso(q[0],10)+": "+fmt(q[1])})))});svg.appendChild(g)});
}
function more(args,btn){btn.disabled=true;B.status("Loading…");B.call(args).then(mod=>{btn.disabled=false;merge(mod)},x=>{btn.disabled=false;B.fail(x.message)})}
$("earlier").onclick=function(){more(S.model.earlier,this)};
$("next").onclick=function(){more(S.model.next,this)};
$("r0").oninput=function(){S.lo=Math.min(+this.value,S.hi-1);draw()};
$("r1").oninput=function(){S.hi=Math.max(+this.value,S.lo+1);draw()};
$("rebase").onchange=draw;
$("reset").onclick=()=>{S.lo=0;S.hi=1000;$("r0").value=0;$("r1").value=1000;draw()};
$("chart").addEventListener("wheel",function(e){e.preventDefault();var w=S.hi-S.lo,c=S.lo+w*(e.offsetX/this.clientWidth),k=e.deltaY<0?0.8:1.25;
  S.lo=Math.max(0,Math.round(c-(c-S.lo)*k));S.hi=Math.min(1000,Math.round(c+(S.hi-c)*k));if(S.hi-S.lo<2)S.hi=S.lo+2;
  $("r0").value=S.lo;$("r1").value=S.hi;draw()},{passive:false});
window.addEventListener("resize",()=>{if(S.model)draw()});
B.on(model=>{S.series=[];merge(model);
  if(model.details&&B.canCall())B.call(model.details).then(d=>{merge(d,true)},()=>{})});B.start("opendata-mcp series");
`;

/** The series view document. */
export function seriesHtml(): string {
  return page("Series", CSS, BODY, SCRIPT);
}
