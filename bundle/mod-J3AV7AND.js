import{a as A,c as M}from"./chunk-RDLT74JI.js";import{c as x}from"./chunk-2QGYR2MH.js";import"./chunk-G3WVAQHJ.js";import"./chunk-7MVGUMYJ.js";import"./chunk-IQHGMYID.js";import"./chunk-KYDRIVDT.js";import"./chunk-M6FOVK3S.js";import"./chunk-26XIJFNW.js";import"./chunk-XIH4DGWD.js";import"./chunk-3KLLCSP3.js";import{c as u}from"./chunk-YXH3RY6G.js";import"./chunk-HJO3THP6.js";import"./chunk-P6AC3V6N.js";import"./chunk-WOT6VMZA.js";import{createHash as T}from"node:crypto";import{createClient as V,ErrorReply as Y,RESP_TYPES as L}from"@redis/client";var f=class extends Error{constructor(t,e){super(t,e),this.name="RedisUnavailableError"}};function l(n){return{lua:n,sha:T("sha1").update(n).digest("hex")}}function I(n,t){return V({url:n.url,disableOfflineQueue:!0,commandOptions:{timeout:n.timeoutMs},socket:{connectTimeout:n.timeoutMs,reconnectStrategy:t}})}function $(n){let t;try{t=new URL(n)}catch{throw new u("server.redis_url",`REDIS_URL is not a valid URL: expected redis://host:port (or rediss:// for TLS), got "${m(n)}"`)}if(t.protocol!=="redis:"&&t.protocol!=="rediss:")throw new u("server.redis_url",`REDIS_URL must start with redis:// or rediss://, got "${t.protocol}//"`);if(t.hostname==="")throw new u("server.redis_url",`REDIS_URL names no host: "${m(n)}"`);return t}function m(n){try{let t=new URL(n);return t.password&&(t.password="***"),t.toString()}catch{return n.replace(/\/\/[^@/]*@/,"//***@")}}var p=class n{prefix;#t;#e;#s=!1;#n=!0;#r=!1;#i;#o=new Map;#c=0;#h=0;constructor(t,e){this.#t=t,this.#e=e,this.prefix=e.prefix}static async connect(t){let e=$(t.url),r=e.port||"6379",s=`${e.hostname}:${r}`;if(t.isNetAllowed&&!t.isNetAllowed(s))throw new u("server.redis_url",`The host "${e.hostname}" of REDIS_URL is outside this process's network allowlist. Add it to "permissions.default.net" in deno.json (deno task start, deno task compile), or run with a flag that replaces that list, e.g. deno run -P --allow-net=${e.hostname},<the list> main.ts`);let i={started:!1,backoff:o=>0},c=I(t,(o,h)=>i.started?i.backoff(o):new Error(h.message)),a=new n(c,t);i.backoff=o=>a.#f(o),c.on("error",o=>a.#a(o)),c.on("ready",()=>a.#d());try{await c.connect(),await c.ping()}catch(o){await c.destroy?.();let h=o instanceof Error?o.message:String(o);throw new u("server.redis_url",`Cannot reach Redis at REDIS_URL "${m(t.url)}" (${h}). Start Redis (or Valkey) there, fix REDIS_URL (server.redis_url), or unset it to keep all state in this process`)}return a.#s=!0,i.started=!0,a.#n=!0,a}get up(){return this.#n&&this.#t.isReady}key(...t){return`${this.prefix}${t.join(":")}`}async command(t){return await this.#l(this.#t,t)}async commandBytes(t){return await this.#l(this.#t,t,{[L.BLOB_STRING]:Buffer})}async script(t,e,r){let s=[String(e.length),...e,...r];try{return await this.command(["EVALSHA",t.sha,...s])}catch(i){if(!(i instanceof Error)||!/NOSCRIPT/.test(i.message))throw i;return await this.command(["EVAL",t.lua,...s])}}async publish(t,e){try{return await this.command(["PUBLISH",this.key(t),e]),!0}catch{return!1}}async subscribe(t,e){let r=this.key(t),s=this.#o.get(r);if(!s){s=new Set,this.#o.set(r,s);let i=s;try{await(await this.#u()).subscribe(r,a=>{for(let o of[...i])o(a)})}catch{}}return s.add(e),()=>s.delete(e)}async close(){if(!this.#r){this.#r=!0;for(let t of[this.#i,this.#t])try{t?.isOpen&&await t.close()}catch{t?.destroy()}}}async#u(){if(this.#i)return this.#i;let t=this.#t.duplicate();return t.on("error",()=>{}),this.#i=t,await t.connect(),t}async#l(t,e,r){if(this.#r||!t.isReady)throw this.#a(new Error("the connection is down")),new f("Redis is out of reach");if(!this.#n){let s=Date.now();if(s<this.#h)throw new f("Redis is out of reach");this.#h=s+Math.min(1e3,this.#e.retryMaxMs)}try{let s=await t.sendCommand(e.map(i=>typeof i=="string"?i:Buffer.from(i.buffer,i.byteOffset,i.byteLength)),r?{typeMapping:r}:void 0);return this.#n||this.#d(),s}catch(s){throw s instanceof Y?s:(this.#a(s),new f(`Redis did not answer: ${s instanceof Error?s.message:String(s)}`,{cause:s}))}}#f(t){let e=Math.min(this.#e.retryMaxMs,100*2**Math.min(t,16));return Math.max(50,Math.round(e*(.5+(this.#e.random??Math.random)()/2)))}#a(t){!this.#s||this.#r||!this.#n||(this.#n=!1,this.#c=Date.now(),this.#e.logger.warn("Redis is out of reach: serving from local fallbacks (cache misses, per-replica rate limits and breakers) and reconnecting with backoff",{redis:m(this.#e.url),error:t instanceof Error?t.message:String(t)}))}#d(){!this.#s||this.#n||this.#r||(this.#n=!0,this.#e.logger.info("Redis is reachable again: shared state resumes",{redis:m(this.#e.url),down_ms:Date.now()-this.#c}))}};import{createHash as D}from"node:crypto";function G(n){return D("sha256").update(n).digest("hex")}var y=`local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`,H=new TextEncoder,O=new TextDecoder,w=class{#t;#e;constructor(t,e){this.#t=t,this.#e=e}async get(t,e){let r;try{r=await this.#t.commandBytes(["GET",this.#s(t)])}catch{return}if(!r)return;let s=r.indexOf(10);if(!(s<0))try{let i=P(JSON.parse(O.decode(r.subarray(0,s))));return!i||i.expiresAt<=e?void 0:{...i,body:r.slice(s+1)}}catch{return}}async set(t,e){if(e.body.byteLength>this.#e.maxEntryBytes)return;let r=Math.ceil(e.expiresAt-e.storedAt);if(r<=0)return;let{body:s,...i}=e,c=H.encode(`${JSON.stringify(i)}
`),a=new Uint8Array(c.byteLength+e.body.byteLength);a.set(c,0),a.set(e.body,c.byteLength);try{await this.#t.command(["SET",this.#s(t),a,"PX",String(r)])}catch{}}#s(t){return this.#t.key("cache",G(t))}};function P(n){if(typeof n!="object"||n===null)return;let{status:t,contentType:e,storedAt:r,expiresAt:s}=n;if(!(!Number.isInteger(t)||t<100||t>599)&&!(typeof e!="string"||e.length>1e3)&&!(!Number.isFinite(r)||!Number.isFinite(s)))return{status:t,contentType:e,storedAt:r,expiresAt:s}}var U=l(`${y}
local maxWait = tonumber(ARGV[1])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local at = now
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then at = math.max(at, tonumber(last[2])) end
local count = redis.call('ZCARD', KEYS[1])
for i = 4, #ARGV, 2 do
  local requests = tonumber(ARGV[i])
  local per = tonumber(ARGV[i + 1])
  if count >= requests then
    local nth = redis.call('ZRANGE', KEYS[1], count - requests, count - requests, 'WITHSCORES')
    at = math.max(at, tonumber(nth[2]) + per)
  end
end
if at - now > maxWait then return {at - now, 0} end
redis.call('ZADD', KEYS[1], at, ARGV[2])
redis.call('PEXPIRE', KEYS[1], at - now + window + 1000)
return {at - now, 1}`),E=class{#t;#e;#s;#n=0;#r=new Map;constructor(t,e,r=new M){this.#t=t,this.#s=e,this.#e=r}async reserve(t,e,r,s){let i=Math.max(0,...e.map(d=>d.perMs)),c=`${this.#s}:${++this.#n}`,a;try{a=await this.#t.script(U,[this.#t.key("rate",t)],[String(Math.max(-1,s-r)),c,String(i),...e.flatMap(d=>[String(d.requests),String(d.perMs)])])}catch{return this.#e.reserve(t,e,r,s)}let o=r+Number(a[0]),h=Number(a[1])===1;return h&&o>r&&(this.#r.set(`${t} ${o}`,c),this.#r.size>1e3&&this.#r.delete(this.#r.keys().next().value)),{at:o,reserved:h}}async cancel(t,e){let r=this.#r.get(`${t} ${e}`);if(r===void 0){this.#e.cancel(t,e);return}this.#r.delete(`${t} ${e}`);try{await this.#t.command(["ZREM",this.#t.key("rate",t),r])}catch{}}},j=l(`${y}
local h = redis.call('HMGET', KEYS[1], 's', 'f', 'o', 'tr', 'l')
if not h[1] then return {0, ''} end
local cooldown = tonumber(ARGV[1])
local s = h[1]
local opened = tonumber(h[3] or '0')
if s == 'open' and now - opened >= cooldown then s = 'half_open' end
if s == 'closed' then return {0, ''} end
if s == 'half_open' then
  if h[4] and now - tonumber(h[4]) < cooldown then
    return {math.max(1, cooldown - (now - tonumber(h[4]))), h[5] or ''}
  end
  redis.call('HSET', KEYS[1], 's', 'half_open', 'tr', now)
  return {0, '', 1}
end
return {opened + cooldown - now, h[5] or ''}`),v=l(`${y}
local h = redis.call('HMGET', KEYS[1], 's', 'f')
local s = h[1] or 'closed'
local f = tonumber(h[2] or '0') + 1
redis.call('HDEL', KEYS[1], 'tr')
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'l', ARGV[3]) end
redis.call('HSET', KEYS[1], 'f', f, 'c', ARGV[1])
local opened = 0
if s == 'half_open' or f >= tonumber(ARGV[2]) then
  if s ~= 'open' then opened = 1 end
  redis.call('HSET', KEYS[1], 's', 'open', 'o', now)
elseif not h[1] then
  redis.call('HSET', KEYS[1], 's', 'closed')
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[2], ARGV[5])
return opened`),B=l(`local h = redis.call('HMGET', KEYS[1], 's', 'f')
redis.call('HDEL', KEYS[1], 'tr')
if h[1] == 'closed' and tonumber(h[2] or '0') == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], ARGV[1])
end
return 1`),C=36e5,S=class{#t;#e;constructor(t,e=new A){this.#t=t,this.#e=e}async acquire(t,e,r){try{let[s,i,c]=await this.#t.script(j,[this.#s(t)],[String(e.cooldownMs)]),a=Number(s),o=_(i);return a>0?o?{waitMs:a,last:o}:{waitMs:a}:Number(c)===1?{waitMs:a,trial:!0}:{waitMs:a}}catch{return this.#e.acquire(t,e,r)}}async success(t){this.#e.success(t);try{await this.#t.command(["DEL",this.#s(t)]),await this.#t.command(["SREM",this.#t.key("breakers"),t])}catch{}}async failure(t,e,r,s){try{let i=await this.#t.script(v,[this.#s(t),this.#t.key("breakers")],[String(e.cooldownMs),String(e.threshold),s?JSON.stringify(s):"",String(e.cooldownMs+C),t]);return Number(i)===1}catch{return this.#e.failure(t,e,r,s)}}async release(t){this.#e.release(t);try{await this.#t.script(B,[this.#s(t),this.#t.key("breakers")],[t])}catch{}}async snapshots(t){try{let e=await this.#t.command(["SMEMBERS",this.#t.key("breakers")]),[r,s]=await this.#t.command(["TIME"]),i=Number(r)*1e3+Math.floor(Number(s)/1e3),c={};for(let a of e.slice(0,1e3)){let[o,h,d,k,N]=await this.#t.command(["HMGET",this.#s(a),"s","f","o","c","l"]);if(o==null){await this.#t.command(["SREM",this.#t.key("breakers"),a]);continue}let K=Number(d??0)+Number(k??0);c[a]=Z(o,Number(h??0),K,_(N??""),i)}return c}catch{return this.#e.snapshots(t)}}#s(t){return this.#t.key("breaker",t)}};function Z(n,t,e,r,s){let i=n==="open"&&s>=e?"half_open":n==="open"||n==="half_open"?n:"closed",c={state:i,consecutive_failures:t};return i==="open"&&(c.retry_in_s=Math.ceil((e-s)/1e3)),r&&(c.last_error={error_type:r.errorType,...r.status===void 0?{}:{status:r.status},...r.messageId===void 0?{}:{message_id:r.messageId}}),c}function _(n){if(n)try{let t=JSON.parse(n),{errorType:e,status:r,messageId:s}=t??{};return typeof e!="string"||e.length>100||r!==void 0&&!Number.isInteger(r)||s!==void 0&&(typeof s!="string"||s.length>100)?void 0:{errorType:e,...r===void 0?{}:{status:r},...s===void 0?{}:{messageId:s}}}catch{return}}var X=l(`${y}
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local h = redis.call('HMGET', KEYS[1], 't', 'l')
local tokens = capacity
if h[1] then tokens = math.min(capacity, tonumber(h[1]) + math.max(0, now - tonumber(h[2])) * rate) end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.max(1, math.ceil((1 - tokens) / rate / 1000)) end
redis.call('HSET', KEYS[1], 't', string.format('%.6f', tokens), 'l', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate) + 1000)
return wait`),b=class{#t;#e;#s;constructor(t,e,r){this.#t=t,this.#e=e,this.#s=r}async take(t){try{let e=await this.#t.script(X,[this.#t.key("ip",G(t).slice(0,32))],[String(this.#e),String(this.#e/6e4)]);return Number(e)}catch{return await this.#s.take(t)}}};var q=l(`redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
else
  redis.call('ZREM', KEYS[2], ARGV[4])
end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[6]) + 1))
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1`),J=l(`local holder = redis.call('GET', KEYS[1])
local held = 0
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  held = 1
end
return {held, redis.call('EXISTS', KEYS[2])}`),W=l(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`),F=l(`local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, 999)) do
  if string.sub(id, 1, #ARGV[2]) == ARGV[2] and redis.call('EXISTS', ARGV[1] .. id) == 0 then
    table.insert(out, id)
  end
end
return out`),g="jobs",R=class{replica;#t;#e;#s=new Set;constructor(t,e,r){this.#t=t,this.replica=e,this.#e=r}#n(t,e){let r=x(t,e);if(!("problem"in r))return r;this.#s.has(e)||(this.#s.size>=1e3&&this.#s.clear(),this.#s.add(e),this.#e?.warn("job record in Redis skipped: it is not a valid record",{job_id:e.slice(0,200),problem:r.problem.slice(0,300)}))}async save(t,e,r){await this.#t.script(q,[this.#r("job",t.id),this.#r("jobs","active"),this.#i(t.owner)],[JSON.stringify(t),String(Math.max(1,Math.round(e))),r?"1":"0",t.id,String(t.createdAt),"1000"])}async load(t){let e=await this.#t.command(["GET",this.#r("job",t)]);return e?this.#n(e,t):void 0}async list(t,e){let r=this.#i(t),s=await this.#t.command(["ZRANGE",r,"0",String(e-1),"REV"]);if(s.length===0)return[];let i=await this.#t.command(["MGET",...s.map(o=>this.#r("job",o))]),c=[],a=[];return i.forEach((o,h)=>{if(!o)a.push(s[h]);else{let d=this.#n(o,s[h]);d&&d.owner===t&&c.push(d)}}),a.length>0&&await this.#t.command(["ZREM",r,...a]).catch(()=>{}),c}async lease(t,e){let[r,s]=await this.#t.script(J,[this.#r("lease",t),this.#r("cancel",t)],[this.replica,String(Math.max(1,Math.round(e)))]);return{held:Number(r)===1,cancel:Number(s)===1}}async claim(t,e){return await this.#t.command(["SET",this.#r("lease",t),this.replica,"NX","PX",String(Math.max(1,Math.round(e)))])==="OK"}async release(t){await this.#t.script(W,[this.#r("lease",t)],[this.replica])}async orphans(t){return await this.#t.script(F,[this.#r("jobs","active")],[this.#r("lease",""),t])}async forget(t){await this.#t.command(["ZREM",this.#r("jobs","active"),t])}async requestCancel(t,e){await this.#t.command(["SET",this.#r("cancel",t),"1","PX",String(Math.max(1,Math.round(e)))]),await this.#t.publish(g,`cancel ${t}`)}async changed(t){await this.#t.publish(g,`changed ${t}`)}async subscribe(t){return await this.#t.subscribe(g,e=>{let[r,s]=e.split(" ");(r==="changed"||r==="cancel")&&s&&t(r,s)})}#r(...t){return this.#t.key(...t)}#i(t){return this.#r("jobs","owner",t===""?"-":t)}};async function ft(n,t){if(!n.redis_url)return;let e=await p.connect({url:n.redis_url,prefix:n.redis_prefix,timeoutMs:Math.round(n.redis_timeout*1e3),retryMaxMs:Math.round(n.redis_retry_max*1e3),logger:t.logger,...t.random?{random:t.random}:{},...t.isNetAllowed?{isNetAllowed:t.isNetAllowed}:{}}),r=`replica-${Deno.pid}-${crypto.randomUUID().slice(0,8)}`;return t.logger.info("shared state in Redis",{replica:r,prefix:n.redis_prefix}),{replica:r,connection:e,cacheStore:new w(e,{maxEntryBytes:Math.round(n.redis_cache_entry_max_kb*1024)}),rateStore:new E(e,r),breakerStore:new S(e),jobs:{store:new R(e,r,t.logger),leaseMs:Math.round(n.job_lease_timeout*1e3),takeoverIntervalMs:Math.round(n.job_takeover_interval*1e3)},clientLimiter:(s,i)=>new b(e,s,i),close:()=>e.close()}}export{p as RedisConnection,f as RedisUnavailableError,ft as openSharedState,m as redactUrl};
