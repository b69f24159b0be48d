(()=>{var S,He,Et,G,ye,ue,Be,ie,Fe,ke,be,We,ne=Symbol.for("pv"),de={},pe=[],Nt=/^m(i|n|o|s|text|space)$/,we=Array.isArray,Se=pe.slice,Y=Object.assign;function Q(e){e&&e.parentNode&&e.remove()}function je(e,t,n){var a,o,s,r={},l=arguments.length;for(s in t)s=="key"?a=t[s]:s=="ref"&&typeof e!="function"?o=t[s]:r[s]=t[s];return l>2&&(r.children=l>3?Se.call(arguments,2):n),te(e,r,a,o,null)}function te(e,t,n,a,o){var s={type:e,props:t,key:n,ref:a,__k:null,__:null,__b:0,__e:null,__c:null,constructor:ne,__v:o||++He,__i:-1,__u:0};return!o&&S.vnode&&S.vnode(s),s}function _e(e){return e.children}function le(e,t){this.props=e,this.context=t,this.__g=0}function V(e,t){if(t==null)return e.__&&V(e.__,e.__i+1);for(var n;t<e.__k.length;t++)if((n=e.__k[t])&&n.__e)return n.__e;return typeof e.type!="function"||e.props.__P?null:V(e)}function Rt(e){var t,n=e.__v,a=n.__e,o=[],s=[],r=e.__P;r&&((t=Y({constructor:ne},n)).__v=n.__v+1,S.vnode&&S.vnode(t),xe(r,t,n,e.__n,r.namespaceURI,32&n.__u?[a]:null,o,a||V(n),32&n.__u,s),t.__v=n.__v,t.__.__k[t.__i]=t,Qe(o,t,s),n.__=n.__e=null,t.__e!=a&&Ke(t))}function Ke(e){if((e=e.__)&&e.__c&&!e.props.__P)return e.__e=null,e.__k.some(function(t){return t&&(e.__e=t.__e)}),Ke(e)}function ve(e){(8&e.__g||(e.__g|=8,G.push(e),ue++))&&ye==S.debounceRendering||((ye=S.debounceRendering)||queueMicrotask)(Ge)}function Ge(){try{for(var e,t=1;G.length;)G.length>t&&G.sort(Be),e=G.shift(),t=G.length,8&e.__g&&Rt(e)}finally{(ue=G.length)&&(ye||queueMicrotask)(Ge)}}function Ve(e,t,n,a,o,s,r,l,u,p,d){var h,_,c,f,v,m,$=a.__k||pe,b=t.length;for(u=It(n,t,$,u,b),h=0;h<b;h++)(c=n.__k[h])!=null&&(_=~c.__i&&$[c.__i]||de,c.__i=h,m=xe(e,c,_,o,s,r,l,u,p,d),f=c.__e,(_.ref!=c.ref||8&_.__u)&&(_.ref&&Ce(_.ref,null,c,_),c.ref&&d.push(c.ref,c.__c||f,c)),v=v||f,4&c.__u?(u=ze(c,u,e,!_.__v),_.__e&&(_.__e=null)):typeof c.type=="function"&&m!==void 0?u=m:f&&(u=f.nextSibling),c.__u&=-21);return n.__e=v,u}function It(e,t,n,a,o){var s,r,l,u,p,d,h,_,c,f=n.length,v=f,m=0,$=0,b=e.__k=Array(o);for(s=0;s<o;s++)(r=t[s])!=null&&typeof r!="boolean"&&typeof r!="function"?(typeof r!="object"||r.constructor===String?r=b[s]=te(null,r):we(r)?r=b[s]=te(_e,{children:r}):r.constructor===ne&&r.__b?r=b[s]=te(r.type,r.props,r.key,r.ref,r.__v):b[s]=r,u=s+m,r.__=e,r.__b=e.__b+1,l=null,~(p=r.__i=Pt(r,n,u,v))&&(v--,(l=n[p])&&(l.__u|=2)),l&&l.__v?(r.__u|=16,p==u-1?m--:p==u+1?m++:p!=u&&(p>u?m--:m++,$=1)):(~p||(o>f?m--:o<f&&m++),typeof r.type!="function"&&(r.__u|=4))):b[s]=null;if($){for(d=[],h=[],s=0;s<o;s++)if((r=b[s])&&16&r.__u){for(m=0,_=d.length;m<_;)d[c=m+_>>1]<r.__i?m=c+1:_=c;d[m]=r.__i,h[s]=m+1}for(m=d.length;s--;)h[s]&&(h[s]==m?m--:b[s].__u|=4)}if(v)for(s=0;s<f;s++)!(l=n[s])||2&l.__u||(l.__e==a&&(a=V(l)),qe(l,l));return a}function ze(e,t,n,a){var o,s,r,l;if(typeof e.type=="function"){if(e.props.__P)return t;if(o=e.__k)for(s=0;s<o.length;s++)o[s]&&(o[s].__=e,t=ze(o[s],t,n,!1));return t}for(t&&!t.parentNode&&(t=V(e))&&!t.parentNode&&(t=null),r=e.__e,l=t;l&&l.nodeType==8;)l=l.nextSibling;for(r!=l&&(!a&&n.moveBefore&&r.parentNode?n.moveBefore(r,t):n.insertBefore(r,t||null)),t=r;(t=t&&t.nextSibling)&&t.nodeType==8&&!t.data.startsWith("$s"););return t}function Pt(e,t,n,a){var o,s=e.key,r=e.type,l=t[n],u=l&&!(2&l.__u);if(l===null&&s==null||u&&s==l.key&&r==l.type)return n;if(a>(u?1:0)){for(o=n-1;o>=0;o--)if((l=t[o])&&!(2&l.__u)&&s==l.key&&r==l.type)return o;for(o=n+1;o<t.length;o++)if((l=t[o])&&!(2&l.__u)&&s==l.key&&r==l.type)return o}return-1}function Oe(e,t,n){n==null&&(n=""),t[0]=="-"?e.setProperty(t,n):e[t]=n}function re(e,t,n,a,o){var s,r;if(t=="style")if(typeof n=="string")e.style.cssText=n;else{if(typeof a=="string"&&(e.style.cssText=a=""),a)for(t in a)n&&t in n||Oe(e.style,t);if(n)for(t in n)a&&n[t]==a[t]||Oe(e.style,t,n[t])}else if(t[0]=="o"&&t[1]=="n")typeof n!="function"&&(n=null),typeof a!="function"&&(a=null),(e.__e||(e.__e={}))[t]=n,n&&a||(r=be[t]||(be[t]=Dt(t)),(e.__a||(e.__a={}))[t]=ke,s=t!=(t=t.replace(Fe,"$1")),(t=t.slice(2))[0]<"a"&&(t=t.toLowerCase()),n?e.addEventListener(t,r,s):e.removeEventListener(t,r,s));else{if(o=="http://www.w3.org/2000/svg")t=t.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(t!="width"&&t!="height"&&t!="href"&&t!="list"&&t!="form"&&t!="tabIndex"&&t!="download"&&t!="rowSpan"&&t!="colSpan"&&t!="role"&&t!="popover"&&t in e)try{return void(e[t]=n??"")}catch{}if(typeof n=="function")return;n==null||n===!1&&t[4]!="-"?e.removeAttribute(t):e.setAttribute(t,t=="popover"&&n==1?"":n)}}function Dt(e){return function(t){var n=this.__e;if(n){if(n=n[e],t[ie]==null)t[ie]=ke++;else if(t[ie]<this.__a[e])return;return n(S.event?S.event(t):t)}}}function xe(e,t,n,a,o,s,r,l,u,p){var d,h,_,c,f,v,m,$,b,x,g,P,M,w,U,j,K,J,F=t.type;if(t.constructor!==ne)return null;128&n.__u&&(u=32&n.__u,d=n.__c.__z)&&(t.__u|=u,h=s=[],d.nodeType==8?l=ce(d,s):s.push(d),l=s[0]||l),(d=S.__b)&&d(t);e:if(typeof F=="function"){_=r.length;try{if($=t.props,b=(d=F.prototype)&&d.render,x=(d=F.contextType)&&a[d.__c],g=d?x?x.props.value:d.__:a,(c=n.__c)?(t.__c=c,2&c.__g&&(c.__g|=1)):(b?t.__c=c=new F($,g):(t.__c=c=new le($,g),c.constructor=F,c.render=Ut),x&&x.sub(c),c.state||(c.state={}),c.__n=a,c.__g|=8,c.__h=[],c.__k=[]),b&&(c.__s||(c.__s=c.state),F.getDerivedStateFromProps&&(c.__s==c.state&&(c.__s=Y({},c.__s)),Y(c.__s,F.getDerivedStateFromProps($,c.__s)))),f=c.props,v=c.state,c.__v=t,n.__c){if($!==f&&b&&!F.getDerivedStateFromProps&&c.componentWillReceiveProps&&c.componentWillReceiveProps($,g),t.__v==n.__v&&!(8&c.__g)||!(4&c.__g)&&c.shouldComponentUpdate&&c.shouldComponentUpdate($,c.__s,g)===!1){t.__v!=n.__v&&(c.props=$,c.state=c.__s,c.__g&=-9),t.__e=n.__e,t.__k=n.__k,t.__k.some(function(L){L&&(L.__=t)}),pe.push.apply(c.__h,c.__k),c.__k=[],c.__h.length&&r.push(c),l=V(n);break e}c.componentWillUpdate&&c.componentWillUpdate($,c.__s,g),b&&c.componentDidUpdate&&c.__h.push(function(){c.componentDidUpdate(f,v,m)})}else b&&!F.getDerivedStateFromProps&&c.componentWillMount&&c.componentWillMount(),b&&c.componentDidMount&&c.__h.push(c.componentDidMount);c.context=g,c.props=$,c.__P=e,c.__g&=-5,P=S.__r,M=b?25:0;do c.__g&=-9,P&&P(t),d=c.render(c.props,c.state=c.__s,c.context);while(8&c.__g&&++M<25);b&&(pe.push.apply(c.__h,c.__k),c.__k=[]),c.state=c.__s,c.getChildContext&&(a=Y({},a,c.getChildContext())),b&&n.__c&&c.getSnapshotBeforeUpdate&&(m=c.getSnapshotBeforeUpdate(f,v)),w=d&&d.type===_e&&d.key==null?d.props.children:d,$.__P&&(d=l,o=(e=$.__P).namespaceURI,u=s=null,n.props&&n.props.__P!=e&&(n.__k.some(function(L){L&&qe(L,L)}),n.__k=null),l=n.__k?V(n,0):null),l=Ve(e,we(w)?w:[w],t,n,a,o,s,r,l,u,p),$.__P&&(t.__e=null,l=d),t.__u&=-161,h&&h.some(Q),c.__h.length&&r.push(c),1&c.__g&&(c.__g&=-4)}catch(L){if(r.length=_,t.__v=null,u||s)if(L&&L.then){if(t.__u|=128|u,s){for(~(K=s.indexOf(l||void 0))||(K=s.length);(J=s[K-1])&&J.nodeType==8;)K--;for(;K<s.length;K++)if(J=s[K])if(s[K]=null,U){if(J==j)break}else{if(J.nodeType!=8)break;J.data.startsWith("$s")&&(j=ce(U=J))}}if(!U){for(;l&&l.nodeType==8&&l.nextSibling;)l=l.nextSibling;U=l}(d=ce(U=t.__c.__z||(t.__c.__z=U)))?(t.__e=U,l=d):t.__e=l,l=l&&l.nextSibling}else s&&s.some(Q);else t.__e=n.__e;t.__k||(t.__k=n.__k||[]),L&&L.then||Je(t),S.__e(L,t,n)}}else l=t.__e=Mt(n.__e,t,n,a,o,s,r,u,p,e);return(d=S.diffed)&&d(t),l}function ce(e,t){if(e&&e.nodeType==8&&e.data.startsWith("$s"))for(var n=1;e=e.nextSibling;){if(e.nodeType==8){if(e.data.startsWith("$s"))n++;else if(e.data.startsWith("/$s")&&!--n)return e}t&&t.push(e)}}function Je(e){e&&(e.__c&&(e.__c.__g|=4),e.__k&&e.__k.some(Je))}function Qe(e,t,n){for(var a=0;a<n.length;)Ce(n[a++],n[a++],n[a++]);S.__c&&S.__c(t,e),e.some(function(o){try{e=o.__h,o.__h=[],e.some(function(s){s.call(o)})}catch(s){S.__e(s,o.__v)}})}function Mt(e,t,n,a,o,s,r,l,u,p){var d,h,_,c,f,v,m,$,b=n.props||de,x=t.props,g=t.type;if(g=="svg"?o="http://www.w3.org/2000/svg":g=="math"?o="http://www.w3.org/1998/Math/MathML":o||(o="http://www.w3.org/1999/xhtml"),s){for(d=0;d<s.length;d++)if((f=s[d])&&(g?f.localName==g:f.nodeType==3)){e=f,s[d]=null;break}}if(!e){if($=p.ownerDocument||document,!g)return $.createTextNode(x);e=$.createElementNS(o,g,x.is?x:p),l&&(S.__m&&S.__m(t,s),l=!1),s=null}if(g){if(p=g=="template"&&e.content||e,s=g=="textarea"&&x.defaultValue!=null?null:s&&Se.call(p.childNodes),!l&&s)for(b={},d=0;d<e.attributes.length;d++)b[(f=e.attributes[d]).name]=f.value;for(d in b)f=b[d],d=="dangerouslySetInnerHTML"?_=f:d=="children"||d in x||d=="value"&&"defaultValue"in x||d=="checked"&&"defaultChecked"in x||re(e,d,null,f,o);for(d in x)f=x[d],d=="children"?c=f:d=="dangerouslySetInnerHTML"?h=f:d=="value"?v=f:d=="checked"?m=f:l&&typeof f!="function"||b[d]===f||re(e,d,f,b[d],o);h?(l||_&&(h.__html==_.__html||h.__html==e.innerHTML)||(e.innerHTML=h.__html),t.__k=[]):(_&&(e.textContent=""),(g=="foreignObject"||o=="http://www.w3.org/1998/Math/MathML"&&Nt.test(g))&&(o="http://www.w3.org/1999/xhtml"),Ve(p,we(c)?c:[c],t,n,a,o,s,r,s?s[0]:n.__k&&V(n,0),l,u),s&&s.some(Q)),l&&g!="textarea"||(d="value",g=="progress"&&v==null?e.removeAttribute(d):v==null||v===e[d]&&(g!="progress"||v)||re(e,d,v,b[d],o),d="checked",m!=null&&m!=e[d]&&re(e,d,m,b[d],o))}else b===x||l&&e.data==x||(e.data=x);return e}function Ce(e,t,n,a){try{typeof e=="function"?t?t.__x=e(t)||1:a&&(a=a.__c||a.__e)&&(t=a.__x)&&(a.__x=null,typeof t=="function"?t():e(null)):e.current=t}catch(o){S.__e(o,n)}}function qe(e,t,n){var a,o,s,r;if(S.unmount&&S.unmount(e),!(a=e.ref)||a.current&&a.current!=e.__e||Ce(a,null,t,e),a=e.__c){if(a.componentWillUnmount)try{a.componentWillUnmount()}catch(l){S.__e(l,t)}a.__P=a.__n=null}if(a=e.__k)for(r=0;r<a.length;r++)a[r]&&qe(a[r],t,typeof e.type!="function"||n&&!e.props.__P);!n&&(a=e.__c)&&(a=a.__z)&&(o=ce(a,s=[]))&&(a==e.__e&&s.some(Q),Q(o),Q(a)),n||Q(e.__e),e.__e=e.__c=e.__=null}function Ut(e,t,n){return this.constructor(e,n)}function Ye(e,t){var n,a,o,s;S.__&&S.__(e,t),t.nodeType==9&&(t=t.documentElement),a=(n=e&&32&e.__u)?null:t.__k,t.__k=te(_e,{children:[e]}),o=[],s=[],xe(t,t.__k,a||de,de,t.namespaceURI,a?null:t.firstChild?Se.call(t.childNodes):null,o,a?a.__e:t.firstChild,n,s),Qe(o,t.__k,s),t.__k.props.children=null}function Xe(e){function t(n){var a,o;return this.getChildContext||(a=new Set,(o={})[t.__c]=this,this.getChildContext=function(){return o},this.shouldComponentUpdate=function(s){this.props.value!=s.value&&a.forEach(function(r){r.__g|=4,ve(r)})},this.sub=function(s){a.add(s);var r=s.componentWillUnmount;s.componentWillUnmount=function(){a.delete(s),r&&r.call(s)}}),n.children}return t.__c="__cC"+We++,t.__=e,t.Provider=(t.Consumer=function(n,a){return n.children(a)}).contextType=t,t}S={__e:function(e,t,n,a){for(var o,s,r;t=t.__;)if((o=t.__c)&&!(1&o.__g)){o.__g|=4;try{if((r=(s=o.constructor)&&s.getDerivedStateFromError)&&o.setState(s.getDerivedStateFromError(e)),o.componentDidCatch&&(o.componentDidCatch(e,a||{}),r=1),r&&8&o.__g)return void(o.__g|=2)}catch(l){e=l}}throw ue=0,e}},He=0,Et=function(e){return e!=null&&e.constructor===ne},le.prototype.setState=function(e,t){var n=this.__s;n&&n!=this.state||(n=this.__s=Y({},this.state)),typeof e=="function"&&(e=e(Y({},n),this.props)),e&&(Y(n,e),this.__v&&(t&&this.__k.push(t),ve(this)))},le.prototype.forceUpdate=function(e){this.__v&&(this.__g|=4,e&&this.__h.push(e),ve(this))},le.prototype.render=_e,G=[],ue=0,Be=function(e,t){return e.__v.__b-t.__v.__b},ie=Symbol(),Fe=/(PointerCapture)$|Capture$/i,ke=0,be={},We=0;var Z,C,Te,Ze,Ae=Object.is,ae=0,lt=[],Ee=[],T=S,et=T.__b,tt=T.__r,nt=T.diffed,st=T.__c,at=T.unmount,ot=T.__;function he(e,t){T.__h&&T.__h(C,e,ae||t),ae=0;var n=C.__H||(C.__H={__:[],__h:[]});return e>=n.__.length&&n.__.push({}),n.__[e]}function y(e){return ae=1,Lt(pt,e)}function Lt(e,t,n){var a=he(Z++,2);if(a.t=e,!a.__c&&(a.__=[n?n(t):pt(void 0,t),function(s){var r=(a.__N||a.__)[0],l=a.t(r,s);Ae(r,l)||(a.__N=[l,a.__[1]],a.__c.setState({}))}],a.__c=C,!C.__f)){C.__f=!0;var o=C.shouldComponentUpdate;C.shouldComponentUpdate=function(s,r,l){var u=this.__H;if(!u)return!0;var p=!1,d=this.props!=s;if(u.__.some(function(_){_.__N&&(p=!0,Ae(_.__[0],_.__N[0])||(d=!0))}),o){var h=o.call(this,s,r,l);return p?h||d:h}return!p||d}}return a.__}function E(e,t){var n=he(Z++,3);!T.__s&&dt(n.__H,t)&&(n.__P=!0,n.__=e,n.u=t,C.__H.__h.push(n))}function H(e){return ae=5,ee(function(){return{current:e}},[])}function ee(e,t){var n=he(Z++,7);return dt(n.__H,t)&&(n.__=e(),n.__H=t),n.__}function ct(e,t){return ae=8,ee(function(){return e},t)}function ut(e){var t=C.context[e.__c],n=he(Z++,9);return n.c=e,t?(n.__==null&&(n.__=!0,t.sub(C)),t.props.value):e.__}function Ot(){var e;do{for(;e=Ee.shift();)try{se(e)}catch(n){T.__e(n,{__:(e=e.__P)&&e.__v})}for(;e=lt.shift();){var t=e.__H;if(e.__P&&t)try{t.__h.some(se),t.__h.some(Ne),t.__h=[]}catch(n){t.__h=[],T.__e(n,e.__v)}}}while(Ee.length)}T.__b=function(e){C=null,et&&et(e)},T.__=function(e,t){e&&t.__k&&t.__k.__m&&(e.__m=t.__k.__m),ot&&ot(e,t)},T.__r=function(e){tt&&tt(e),Z=0;var t=(C=e.__c).__H;t&&(Te==C?C.__h=[]:(t.__h.some(se),t.__h.some(Ne),Z=0),t.__h=[],t.__.some(function(n){n.__N&&(n.__=n.__N),n.u=n.__N=void 0})),Te=C},T.diffed=function(e){nt&&nt(e);var t=e.__c;t&&t.__H&&(t.__H.__h.length&&it(lt.push(t)),t.__H.__.some(function(n){n.u&&(n.__H=n.u)})),Te=C=null},T.__c=function(e,t){t.some(function(n){try{n.__h.some(se),n.__h=n.__h.filter(function(a){return!a.__||Ne(a)})}catch(a){n.__h=[function(){throw a}]}}),st&&st(e,t)},T.unmount=function(e){at&&at(e);var t,n,a=e.__c;a&&a.__H&&(a.__H.__.some(function(o){try{if(o.__P&&o.__c){if(n===void 0){for(n=e.__;n&&(!n.__c||!n.__c.__P);)n=n.__;n=n&&n.__c}o.__P=n,it(Ee.push(o))}else se(o)}catch(s){t=s}}),a.__H=void 0,t&&T.__e(t,a.__v))};var rt=typeof requestAnimationFrame=="function";function Ht(e){var t,n=function(){clearTimeout(a),rt&&cancelAnimationFrame(t),setTimeout(e)},a=setTimeout(n,35);rt&&(t=requestAnimationFrame(n))}function it(e){e!=1&&Ze==T.requestAnimationFrame||((Ze=T.requestAnimationFrame)||Ht)(Ot)}function se(e){var t=C,n=e.__c;typeof n=="function"&&(e.__c=void 0,n()),C=t}function Ne(e){var t=C;e.__c=e.__(),C=t}function dt(e,t){return!e||e.length!=t.length||t.some(function(n,a){return!Ae(n,e[a])})}function pt(e,t){return typeof t=="function"?t(e):t}var Re="contrail.key",_t=()=>sessionStorage.getItem(Re)||"",ht=e=>sessionStorage.setItem(Re,e),Ie=()=>sessionStorage.removeItem(Re),X=class extends Error{constructor(t,n,a,o){super(a),this.status=t,this.code=n||"",this.field=o||""}};function ft(e){if(!(e instanceof X))return`Could not reach the node (${e.message}). Is \`contrail serve\` still running?`;switch(e.status){case 401:return`The node refused the key: ${e.message}. Sign out and sign in with a valid key.`;case 403:return`Not allowed with this key: ${e.message}`;case 429:return`Slow down: ${e.message}`}return e.field?`${e.message} (field ${e.field})`:e.message}async function Pe(e,t,n,a,o={}){let s={...o};e&&(s.Authorization="Bearer "+e),a!==void 0&&(s["Content-Type"]="application/json");let r;try{r=await fetch(n,{method:t,headers:s,body:a===void 0?void 0:JSON.stringify(a)})}catch(p){throw new Error(p.message||String(p))}let l=await r.text(),u=null;try{u=l?JSON.parse(l):null}catch{u=null}return{res:r,data:u,text:l}}async function N(e,t,n,a){let{res:o,data:s,text:r}=await Pe(e,t,n,a);if(!o.ok){let l=s&&s.error||{};throw new X(o.status,l.code||l.type,l.message||r||o.statusText,l.field||l.param)}return s}var Bt={UNAUTHENTICATED:401,FORBIDDEN:403,NOT_FOUND:404,RATE_LIMITED:429,INTERNAL_SERVER_ERROR:500};async function D(e,t,n={}){let{res:a,data:o,text:s}=await Pe(e,"POST","/graphql",{query:t,variables:n}),r=o&&o.errors||[];if(!a.ok||r.length){let u=(r[0]||{}).extensions||{},p=r.length?r.map(h=>h.message).join("; "):s||a.statusText,d=a.status!==200?a.status:Bt[u.code]||400;throw new X(d,u.code,p,u.field)}return o.data}async function fe(){let e=await Pe("","GET","/readyz");return{ready:e.res.ok,status:e.data||{status:e.text}}}var $e=class{constructor(t,n){this.key=t,this.onClosed=n||(()=>{}),this.next=1,this.subs=new Map,this.closedByUs=!1,this.ready=this.open()}open(){return new Promise((t,n)=>{let a=(location.protocol==="https:"?"wss://":"ws://")+location.host+"/graphql",o=new WebSocket(a,"graphql-transport-ws");this.ws=o;let s=!1;o.onopen=()=>o.send(JSON.stringify({type:"connection_init",payload:{Authorization:"Bearer "+this.key}})),o.onmessage=r=>{let l;try{l=JSON.parse(r.data)}catch{return}switch(l.type){case"connection_ack":s=!0,t(this);break;case"ping":o.send(JSON.stringify({type:"pong"}));break;case"next":{let u=this.subs.get(l.id);u&&l.payload&&l.payload.errors&&l.payload.errors.length?u.error(l.payload.errors.map(p=>p.message).join("; ")):u&&l.payload&&u.next(l.payload.data);break}case"error":{let u=this.subs.get(l.id);this.subs.delete(l.id),u&&u.error((l.payload||[]).map(p=>p.message).join("; ")||"subscription refused");break}case"complete":{let u=this.subs.get(l.id);this.subs.delete(l.id),u&&u.complete&&u.complete();break}}},o.onclose=r=>{let l=r.reason||`the connection closed (code ${r.code})`;if(!s){n(new Error(l));return}for(let u of this.subs.values())u.error("lost the live connection to the node: "+l);this.subs.clear(),this.closedByUs||this.onClosed(l)}})}subscribe(t,n,a){let o=String(this.next++),s=!1;return this.ready.then(()=>{s||(this.subs.set(o,a),this.ws.send(JSON.stringify({id:o,type:"subscribe",payload:{query:t,variables:n}})))},r=>a.error(r.message)),()=>{s=!0,this.subs.delete(o)&&this.ws.readyState===WebSocket.OPEN&&this.ws.send(JSON.stringify({id:o,type:"complete"}))}}close(){this.closedByUs=!0,this.ws.close(1e3,"bye")}};var mt=function(e,t,n,a){var o;t[0]=0;for(var s=1;s<t.length;s++){var r=t[s++],l=t[s]?(t[0]|=r?1:2,n[t[s++]]):t[++s];r===3?a[0]=l:r===4?a[1]=Object.assign(a[1]||{},l):r===5?(a[1]=a[1]||{})[t[++s]]=l:r===6?a[1][t[++s]]+=l+"":r?(o=e.apply(l,mt(e,l,n,["",null])),a.push(o),l[0]?t[0]|=2:(t[s-2]=0,t[s]=o)):a.push(l)}return a},$t=new Map;function gt(e){var t=$t.get(this);return t||(t=new Map,$t.set(this,t)),(t=mt(this,t.get(e)||(t.set(e,t=(function(n){for(var a,o,s=1,r="",l="",u=[0],p=function(_){s===1&&(_||(r=r.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?u.push(0,_,r):s===3&&(_||r)?(u.push(3,_,r),s=2):s===2&&r==="..."&&_?u.push(4,_,0):s===2&&r&&!_?u.push(5,0,!0,r):s>=5&&((r||!_&&s===5)&&(u.push(s,0,r,o),s=6),_&&(u.push(s,_,0,o),s=6)),r=""},d=0;d<n.length;d++){d&&(s===1&&p(),p(d));for(var h=0;h<n[d].length;h++)a=n[d][h],s===1?a==="<"?(p(),u=[u],s=3):r+=a:s===4?r==="--"&&a===">"?(s=1,r=""):r=a+r[0]:l?a===l?l="":r+=a:a==='"'||a==="'"?l=a:a===">"?(p(),s=1):s&&(a==="="?(s=5,o=r,r=""):a==="/"&&(s<5||n[d][h+1]===">")?(p(),s===3&&(u=u[0]),s=u,(u=u[0]).push(2,0,s),s=0):a===" "||a==="	"||a===`
`||a==="\r"?(p(),s=2):r+=a),s===3&&r==="!--"&&(s=4,u=u[0])}return p(),u})(e)),t),arguments,[])).length>1?t:t[0]}var i=gt.bind(je),De=Xe(null),q=()=>ut(De);function I(e,t){let[n,a]=y({data:null,error:null,loading:!0}),o=H(0),s=ct(()=>{let r=++o.current;a(l=>({...l,loading:!0})),e().then(l=>r===o.current&&a({data:l,error:null,loading:!1}),l=>r===o.current&&a({data:null,error:l,loading:!1}))},t);return E(s,[s]),{...n,reload:s}}function B(e){let[t,n]=y({busy:!1,error:null,done:null});return{...t,run:async(...o)=>{n({busy:!0,error:null,done:null});try{let s=await e(...o);return n({busy:!1,error:null,done:s}),s}catch(s){n({busy:!1,error:s,done:null});return}}}}function k({error:e}){if(!e)return null;let t=typeof e=="string"?e:ft(e);return i`<p class="error" role="alert">${t}</p>`}function R({what:e}){return i`<p class="muted" aria-live="polite">Loading ${e||""}…</p>`}function O({title:e,actions:t,children:n}){let a=H(null);return E(()=>a.current&&a.current.focus(),[e]),i`<section class="page">
    <header class="page-head"><h1 tabindex="-1" ref=${a}>${e}</h1>${t?i`<div class="actions">${t}</div>`:null}</header>
    ${n}
  </section>`}var A=e=>{if(e==null||e==="")return"";let t=typeof e=="number"?new Date(e*1e3):new Date(e);return isNaN(t)?String(e):t.toLocaleString()};function me(e){if(e<0&&(e=0),e<1e3)return`+${Math.round(e)}ms`;if(e<6e4)return`+${(e/1e3).toFixed(2)}s`;let t=Math.floor(e/6e4),n=Math.round(e%6e4/1e3);return`+${t}m${String(n).padStart(2,"0")}s`}function ge({score:e,fits:t,label:n}){let a=Math.max(0,Math.min(1,e))*100;return i`<span class="score">
    <span class="bar" aria-hidden="true"><span class=${t?"fill fits":"fill"} style=${{width:a.toFixed(1)+"%"}}></span></span>
    <span class="num">${e.toFixed(3)}</span>
    ${t?i`<span class="badge ok" title="above the router's threshold">fits</span>`:null}
    ${n?i`<span class="sr-only">${n}</span>`:null}
  </span>`}function yt({v:e,depth:t=0}){return e==null?i`<span class="muted">—</span>`:typeof e=="string"?e.includes(`
`)||e.length>120?i`<pre class="text">${e}</pre>`:i`<span class="text">${e}</span>`:typeof e!="object"?i`<span class="text">${String(e)}</span>`:t>3?i`<code>${JSON.stringify(e)}</code>`:Array.isArray(e)?e.length?i`<ol class="kv-list">${e.map(n=>i`<li><${yt} v=${n} depth=${t+1} /></li>`)}</ol>`:i`<span class="muted">none</span>`:i`<${W} data=${e} depth=${t+1} />`}function W({data:e,depth:t=0}){let n=Object.keys(e||{});return n.length?i`<dl class="kv">${n.map(a=>i`<div><dt>${a}</dt><dd><${yt} v=${e[a]} depth=${t} /></dd></div>`)}</dl>`:i`<span class="muted">no data</span>`}function oe({label:e,value:t,id:n}){let[a,o]=y(""),s=H(null);return i`<div class="copy">
    <label for=${n}>${e}</label>
    <div class="row"><input id=${n} ref=${s} readonly value=${t} onFocus=${l=>l.target.select()} />
    <button type="button" onClick=${async()=>{s.current.select();try{await navigator.clipboard.writeText(t),o("Copied.")}catch{o(document.execCommand&&document.execCommand("copy")?"Copied.":"Selected: press Ctrl-C to copy.")}}}>Copy</button></div>
    <span class="muted" aria-live="polite">${a}</span>
  </div>`}var Me="id text type timestamp sentBy { handle } inReplyTo { id } embeds { key contentType uri }",Ft=`{ allSessions(first: 50) { handle name frontendAgentId created }
  allAgents(first: 1000) { agentId handle name kind } }`;function bt({args:e}){let{key:t}=q(),n=e[0]||"",a=I(()=>D(t,Ft),[t,n]),[o,s]=y("fixie"),[r,l]=y(""),[u,p]=y(null),d=a.data&&a.data.allAgents||[],h=c=>(d.find(f=>f.agentId===c)||{}).handle||c,_=async c=>{p(null);try{let f=await D(t,"mutation($a: String) { createSession(sessionData: {frontendAgentId: $a}) { session { handle } } }",{a:o});l(c||""),location.hash="#/chat/"+f.createSession.session.handle}catch(f){p(f)}};return i`<${O} title=${n?`Chat \xB7 ${n}`:"Chat"}>
    <div class="split">
      <aside class="side" aria-label="Sessions">
        <form class="stack" onSubmit=${c=>{c.preventDefault(),_("")}}>
          <label for="chat-agent">Agent for a new session</label>
          <select id="chat-agent" value=${o} onChange=${c=>s(c.target.value)}>
            ${(d.length?d:[{handle:"fixie"}]).map(c=>i`<option value=${c.handle}>${c.handle}${c.name?` \u2014 ${c.name}`:""}</option>`)}
          </select>
          <button type="submit">New session</button>
        </form>
        <${k} error=${u||a.error} />
        <h2>Past sessions</h2>
        ${a.loading&&!a.data?i`<${R} what="sessions" />`:null}
        <ul class="sessions">
          ${(a.data&&a.data.allSessions||[]).map(c=>i`<li class=${c.handle===n?"current":""}>
            <a href=${"#/chat/"+c.handle} aria-current=${c.handle===n?"page":void 0}>${c.name||c.handle}</a>
            <span class="muted">${h(c.frontendAgentId)} · ${A(c.created)}</span>
            <a class="small" href=${"#/timeline/"+c.handle} aria-label=${"Timeline of "+c.handle}>timeline</a>
          </li>`)}
        </ul>
      </aside>
      <div class="main-col">
        ${n?i`<${Wt} key=${n} handle=${n} pending=${r} onPendingSent=${()=>l("")} />`:i`<${vt} ready=${!0} label=${`Message to ${o} (starts a new session)`} onSend=${c=>_(c)} />`}
      </div>
    </div>
  <//>`}function Wt({handle:e,pending:t,onPendingSent:n}){let{key:a,subs:o}=q(),[s,r]=y([]),[l,u]=y({}),[p,d]=y(!1),[h,_]=y(""),[c,f]=y(null),v=H(null),m=H(!1),$=g=>r(P=>{let M=new Map(P.map(w=>[w.id,w]));for(let w of g)M.set(w.id,w);return[...M.values()].sort((w,U)=>Date.parse(w.timestamp)-Date.parse(U.timestamp))});E(()=>o.subscribe(`subscription($h: String!) { sessionMessages(handle: $h) { kind sequence
        message { ${Me} } delta { messageId inReplyTo index text } } }`,{h:e},{next:P=>{let M=P.sessionMessages;if(M.kind==="ready")D(a,`query($h: String!) { sessionByHandle(handle: $h) { frontendAgentId messages(first: 1000) { ${Me} } } }`,{h:e}).then(w=>{if(!w.sessionByHandle){f(`No session ${e} in your account.`);return}_(w.sessionByHandle.frontendAgentId),$(w.sessionByHandle.messages),d(!0)},f);else if(M.kind==="message")$([M.message]),u(w=>{if(!w[M.message.id])return w;let{[M.message.id]:U,...j}=w;return j});else if(M.kind==="delta"){let w=M.delta;v.current&&!v.current.reply&&(v.current.reply=w.messageId),u(U=>{let j=U[w.messageId]||{text:"",inReplyTo:w.inReplyTo,deltas:0};return{...U,[w.messageId]:{...j,text:j.text+w.text,deltas:j.deltas+1}}})}},error:P=>f(P)}),[e]),E(()=>{let g=v.current;g&&g.reply&&l[g.reply]&&!m.current&&(m.current=!0,performance.measure("first-token",{start:g.start,end:performance.now()}),v.current=null)},[l]);let b=async g=>{f(null),v.current={start:performance.now(),reply:null},m.current=!1;try{let P=await D(a,`mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}) { message { ${Me} } } }`,{s:e,t:g});return $([P.sendSessionMessage.message]),!0}catch(P){return v.current=null,f(P),!1}};E(()=>{p&&t&&(n(),b(t),document.getElementById("chat-input")?.focus())},[p]);let x=H(null);return E(()=>{let g=x.current;g&&(g.scrollTop=g.scrollHeight)},[s,l]),i`<div class="conversation">
    <p class="muted">Session <code>${e}</code>${h?i` · front agent <code>${h}</code>`:null}${" \xB7 "}<a href=${"#/timeline/"+e}>Timeline of this session</a></p>
    <${k} error=${c} />
    <ol class="messages" ref=${x} aria-label="Messages" aria-live="polite" aria-relevant="additions">
      ${s.map(g=>i`<${jt} m=${g} />`)}
      ${Object.entries(l).map(([g,P])=>i`<li class="msg response streaming" data-streaming="true" data-reply-id=${g} aria-busy="true">
        <div class="meta">writing… <span class="muted">(${P.deltas} pieces so far)</span></div>
        <div class="body">${P.text}</div>
      </li>`)}
    </ol>
    ${p?null:i`<${R} what="the session" />`}
    <${vt} ready=${p} label="Message" onSend=${b} />
  </div>`}function jt({m:e}){return i`<li class=${"msg "+e.type} data-message-id=${e.id} data-type=${e.type}>
    <div class="meta"><strong>${e.sentBy.handle}</strong> · <time datetime=${e.timestamp}>${A(e.timestamp)}</time>${e.type==="error"?" \xB7 no answer":""}</div>
    <div class="body">${e.text}</div>
    ${e.embeds.length?i`<ul class="embeds">${e.embeds.map(t=>i`<li><${Kt} e=${t} /></li>`)}</ul>`:null}
  </li>`}function Kt({e}){let t=e.uri.startsWith("data:");try{t=t||new URL(e.uri,location.href).origin===location.origin}catch{t=!1}return e.contentType.startsWith("image/")&&t?i`<figure><img src=${e.uri} alt=${"embed #"+e.key} /><figcaption>#${e.key} · ${e.contentType}</figcaption></figure>`:i`<a href=${e.uri} target="_blank" rel="noopener noreferrer">#${e.key} (${e.contentType})</a>`}function vt({ready:e,label:t,onSend:n}){let[a,o]=y(""),[s,r]=y(!1);return i`<form class="composer" onSubmit=${async u=>{u.preventDefault();let p=a.trim();if(!p)return;r(!0);let d=await n(p);r(!1),d!==!1&&o("")}}>
    <label for="chat-input">${t}</label>
    <div class="row">
      <input id="chat-input" autocomplete="off" value=${a} onInput=${u=>o(u.target.value)} placeholder="What is 12 times 7?" />
      <button type="submit" disabled=${!e||s}>${s?"Sending\u2026":"Send"}</button>
    </div>
  </form>`}function wt({args:e}){let t=e[0]||"";return t?i`<${Vt} key=${t} handle=${t} />`:i`<${Gt} />`}function Gt(){let{key:e}=q(),t=I(()=>D(e,"{ allSessions(first: 100) { handle name created } }"),[e]);return i`<${O} title="Timeline">
    <p>Pick a session to see every event of it in the log, live while it runs.</p>
    <${k} error=${t.error} />
    ${t.loading?i`<${R} what="sessions" />`:null}
    <ul class="sessions">${(t.data&&t.data.allSessions||[]).map(n=>i`<li>
      <a href=${"#/timeline/"+n.handle}>${n.name||n.handle}</a> <span class="muted">${A(n.created)}</span></li>`)}</ul>
  <//>`}function Vt({handle:e}){let{subs:t}=q(),[n,a]=y([]),[o,s]=y(null),[r,l]=y(-1);E(()=>t.subscribe("subscription($h: String!) { sessionEvents(handle: $h, fromSequence: 0) { sequence id type time version actor correlationId causationId data } }",{h:e},{next:m=>a($=>$.length&&$[$.length-1].sequence>=m.sessionEvents.sequence?$:[...$,m.sessionEvents]),error:s}),[e]);let u=ee(()=>zt(n),[n]),p=n.length-1,d=r<0||r>p?p:r,h=r<0,_=n.slice(0,d+1),c=n.length?Date.parse(n[0].time):0,f=n.length?n[d].sequence:0,v=H(null);return E(()=>{!h&&v.current&&v.current.scrollIntoView({block:"nearest"})},[d,h]),i`<${O} title=${`Timeline \xB7 ${e}`}>
    <p class="muted"><a href=${"#/chat/"+e}>Chat of this session</a> · ${n.length} events${h?" \xB7 following live":""}</p>
    <${k} error=${o} />
    ${!n.length&&!o?i`<${R} what="the log" />`:null}
    ${n.length?i`<div class="scrub">
      <label for="scrub">Show the log up to sequence <strong id="scrub-seq">${f}</strong> (event ${d+1} of ${n.length})</label>
      <input id="scrub" type="range" min="0" max=${p} step="1" value=${d} aria-valuetext=${`sequence ${f}, event ${d+1} of ${n.length}`}
        onInput=${m=>{let $=Number(m.target.value);l($===p?-1:$)}} />
      <div class="row">
        <${oe} id="replay-cmd" label="Replay from here in a terminal" value=${`contrail replay session ${e} --from ${f}`} />
        <button type="button" disabled=${h} onClick=${()=>l(-1)}>Follow live</button>
      </div>
    </div>`:null}
    <div class="split">
      <ol class="events" aria-label="Events">
        ${_.map((m,$)=>i`<${Jt} e=${m} i=${$} start=${c} prev=${$?Date.parse(n[$-1].time):c}
          duration=${u.get(m.sequence)} current=${$===d&&!h} refEl=${$===d?v:null} onPick=${()=>l($===p?-1:$)} />`)}
      </ol>
      <aside class="side" aria-label="The session at this sequence">
        <h2>The session at sequence ${f}</h2>
        <${Yt} evs=${_} />
        ${d<p?i`<p class="muted">${p-d} later event${p-d===1?"":"s"} hidden.</p>`:null}
      </aside>
    </div>
  <//>`}function zt(e){let t=new Map,n=new Map;for(let a of e){if(a.type!=="session.agent_step")continue;let o=a.data||{},s=[o.reply_id,o.path||o.agent,o.name].join("|");(o.kind==="ask_func"||o.kind==="ask_agent")&&t.set(s,Date.parse(a.time)),(o.kind==="func_says"||o.kind==="agent_says")&&t.has(s)&&(n.set(a.sequence,Date.parse(a.time)-t.get(s)),t.delete(s))}return n}function Jt({e,i:t,start:n,prev:a,duration:o,current:s,refEl:r,onPick:l}){let u=Date.parse(e.time),p=e.data||{};return i`<li class=${"event"+(s?" current":"")} ref=${r} data-type=${e.type} data-kind=${p.kind||void 0} data-sequence=${e.sequence}>
    <div class="ev-head">
      <button type="button" class="seq" onClick=${l} aria-label=${`Scrub to sequence ${e.sequence}`}>#${e.sequence}</button>
      <span class="offset" title=${A(e.time)}>${me(u-n)}</span>
      ${t?i`<span class="muted">(${me(u-a)} after the previous)</span>`:null}
      <span class="type">${e.type}</span>
    </div>
    <div class="ev-body"><${Qt} e=${e} duration=${o} /></div>
    <details><summary>All fields</summary><${W} data=${{...p,_event_id:e.id,_version:e.version,_actor:e.actor,_correlation:e.correlationId,_causation:e.causationId}} /></details>
  </li>`}var z=e=>e.path||e.agent||"";function Qt({e,duration:t}){let n=e.data||{},a=t!==void 0?i` <span class="badge">took ${me(t).slice(1)}</span>`:null,o=n.call?i` <span class="badge" title="the model call that produced this step">model call ${n.call}</span>`:null;switch(e.type){case"session.created":return i`<p>Session opened; front agent <code>${n.frontend_agent_handle||n.frontend_agent_id}</code>.</p>`;case"session.message_posted":return i`<p><strong>${n.sent_by}</strong> asks: ${n.text}</p>${kt(n.embeds)}`;case"session.query_dispatched":return i`<p>Query <code>${n.message_id}</code> handed to agent <code>${n.agent_handle||n.agent_id}</code>; its reply will be <code>${n.reply_id}</code>.</p>`;case"session.routed":return i`<div>
        <p>${n.path?i`<code>${n.path}</code> `:null}routed “${n.query}” → ${n.chosen?i`<strong>${n.chosen}</strong>`:i`<em>no agent fits</em> (the front agent answers)`}</p>
        <table class="scores"><caption class="sr-only">Candidates and their scores</caption>
          <thead><tr><th scope="col">Candidate</th><th scope="col">Score</th></tr></thead>
          <tbody>${(n.matches||[]).map(s=>i`<tr class=${s.handle===n.chosen?"chosen":""}><td>${s.handle}${s.handle===n.chosen?" (chosen)":""}</td><td><${ge} score=${s.score} fits=${s.handle===n.chosen} /></td></tr>`)}</tbody>
        </table></div>`;case"session.agent_step":switch(n.kind){case"thought":return i`<p class="step thought"><code>${z(n)}</code> thinks: ${n.text}${o}</p>`;case"ask_func":return i`<p class="step"><code>${z(n)}</code> calls func <strong>${n.name}</strong> with <code class="args">${n.text}</code>${o}</p>`;case"func_says":return i`<p class="step"><code>${z(n)}</code> ← func <strong>${n.name}</strong> says: <code class="args">${n.text}</code>${a}</p>`;case"ask_agent":return i`<p class="step"><code>${z(n)}</code> asks agent <strong>${n.name}</strong>: ${n.text}${o}</p>`;case"agent_says":return i`<p class="step"><code>${z(n)}</code> ← agent <strong>${n.name}</strong> says: ${n.text}${a}</p>`;case"answer":return i`<p class="step answer"><code>${z(n)}</code> answers: ${n.text}${o}</p>`;case"failed":return i`<p class="step failed"><code>${z(n)}</code> failed: ${n.text}</p>`}return i`<p class="step"><code>${z(n)}</code> ${n.kind}${n.name?` [${n.name}]`:""}: ${n.text}${o}</p>`;case"session.reply_posted":return i`<p><strong>${n.sent_by}</strong> replies: ${n.text}</p>${kt(n.embeds)}`;case"session.reply_failed":return i`<p class="failed">No reply from <strong>${n.sent_by}</strong>: ${n.error}</p>`;case"session.deleted":return i`<p>Session deleted.</p>`}return i`<${W} data=${n} />`}function kt(e){let t=Object.keys(e||{});return t.length?i`<p class="muted">Embeds: ${t.map(n=>i`<code>#${n}</code> (${e[n].content_type}) `)}</p>`:null}function Yt({evs:e}){let t=[],n="";for(let a of e){let o=a.data||{};a.type==="session.message_posted"&&t.push({id:o.message_id,who:o.sent_by,text:o.text,cls:"query"}),a.type==="session.reply_posted"&&t.push({id:o.message_id,who:o.sent_by,text:o.text,cls:"response"}),a.type==="session.reply_failed"&&t.push({id:o.message_id,who:o.sent_by,text:o.error,cls:"error"}),a.type==="session.query_dispatched"&&(n=o.agent_handle||o.agent_id),(a.type==="session.reply_posted"||a.type==="session.reply_failed")&&(n="")}return i`<ol class="messages compact">
    ${t.map(a=>i`<li class=${"msg "+a.cls}><div class="meta"><strong>${a.who}</strong></div><div class="body">${a.text}</div></li>`)}
    ${n?i`<li class="msg response muted">${n} is working on a reply…</li>`:null}
    ${t.length?null:i`<li class="muted">No messages yet.</li>`}
  </ol>`}var St="agentId handle name description kind published queries queryUrl funcUrl moreInfoUrl model created modified owner { username }";function xt({args:e}){let t=e[0]||"",{key:n}=q(),a=I(()=>D(n,`{ allAgents(first: 1000) { ${St} } }`),[n]),[o,s]=y("");return i`<${O} title=${t?`Agent \xB7 ${t}`:"Agents"}>
    <div class="split">
      <div class="main-col">
        ${t?i`<${tn} key=${t} handle=${t} onTry=${s} onChanged=${a.reload} />`:i`<${Xt} list=${a} />`}
      </div>
      <aside class="side">
        <${nn} query=${o} setQuery=${s} />
        <${an} onDone=${a.reload} />
      </aside>
    </div>
  <//>`}function Xt({list:e}){return e.error?i`<${k} error=${e.error} />`:e.data?i`<table class="grid">
    <caption>Agents you may use: built-ins, yours, and published ones</caption>
    <thead><tr><th scope="col">Handle</th><th scope="col">Kind</th><th scope="col">Owner</th><th scope="col">Sample queries</th><th scope="col">Description</th></tr></thead>
    <tbody>${e.data.allAgents.map(t=>i`<tr>
      <td><a href=${"#/agents/"+t.handle}>${t.handle}</a>${t.published?i` <span class="badge">published</span>`:null}</td>
      <td>${t.kind}</td><td>${t.owner?t.owner.username:i`<span class="muted">built-in</span>`}</td>
      <td>${t.queries.length}</td><td>${t.description||t.name||""}</td></tr>`)}</tbody>
  </table>`:i`<${R} what="agents" />`}var Zt=e=>[...new Set((e||[]).flatMap(t=>[...t.matchAll(/Ask Func\[([^\]]+)\]/g)].map(n=>n[1])))];function en(e){let t=/^(Q|Thought|Ask Func\[[^\]]*\]|Func\[[^\]]*\] says|Ask Agent\[[^\]]*\]|Agent\[[^\]]*\] says|A):/.exec(e);return t?t[1]==="Q"?"l-q":t[1]==="A"?"l-a":t[1]==="Thought"?"l-thought":t[1].endsWith("says")?"l-says":"l-ask":""}function tn({handle:e,onTry:t,onChanged:n}){let{key:a,me:o}=q(),s=I(()=>D(a,`query($h: String!) { agentByHandle(handle: $h) { ${St} basePrompt fewShots } }`,{h:e}),[a,e]),r=B(async()=>(await D(a,"mutation($h: String!) { refreshAgent(handle: $h) { agent { handle } } }",{h:e}),s.reload(),n(),"Read its description again.")),l=B(async()=>{await D(a,"mutation($h: String!) { deleteAgent(handle: $h) { agent { handle } } }",{h:e}),n(),location.hash="#/agents"});if(s.error)return i`<${k} error=${s.error} />`;if(!s.data)return i`<${R} what=${e} />`;let u=s.data.agentByHandle;if(!u)return i`<p role="alert" class="error">No agent ${e} that your key may use. <a href="#/agents">All agents</a></p>`;let p=u.owner&&u.owner.username===o.username,d=Zt(u.fewShots);return i`<article class="agent">
    <p><a href="#/agents">← All agents</a></p>
    <h2>${u.name||u.handle} <span class="badge">${u.kind}</span>${u.published?i` <span class="badge">published</span>`:null}</h2>
    ${u.description?i`<p>${u.description}</p>`:null}
    <dl class="kv">
      <div><dt>Handle</dt><dd><code>${u.handle}</code> (<code>${u.agentId}</code>)</dd></div>
      <div><dt>Owner</dt><dd>${u.owner?u.owner.username:"built-in"}</dd></div>
      ${u.funcUrl?i`<div><dt>Funcs URL</dt><dd><code>${u.funcUrl}</code></dd></div>`:null}
      ${u.queryUrl?i`<div><dt>Query URL</dt><dd><code>${u.queryUrl}</code></dd></div>`:null}
      <div><dt>Model</dt><dd>${u.model||i`<span class="muted">the platform's default</span>`}</dd></div>
      <div><dt>Modified</dt><dd>${A(u.modified)}</dd></div>
    </dl>
    ${p?i`<div class="row">
      <button type="button" onClick=${()=>r.run()} disabled=${r.busy}>Refresh from its URL</button>
      <${Ue} label="Delete agent" confirm=${`Really delete ${u.handle}?`} onConfirm=${()=>l.run()} busy=${l.busy} />
      <span aria-live="polite" class="muted">${r.done||""}</span>
    </div><${k} error=${r.error||l.error} />`:null}
    <h3>Sample queries</h3>
    ${u.queries.length?i`<ul class="queries">${u.queries.map(h=>i`<li>${h} <button type="button" class="small" onClick=${()=>t(h)}>Try routing</button></li>`)}</ul>`:i`<p class="muted">None: the router never picks this agent.</p>`}
    <h3>Funcs</h3>
    ${d.length?i`<ul>${d.map(h=>i`<li><code>${h}</code></li>`)}</ul>`:i`<p class="muted">Its few-shots call no func.</p>`}
    <h3>Base prompt</h3>
    ${u.basePrompt?i`<pre class="text">${u.basePrompt}</pre>`:i`<p class="muted">None.</p>`}
    <h3>Few-shots</h3>
    ${(u.fewShots||[]).length?(u.fewShots||[]).map((h,_)=>i`<figure class="fewshot"><figcaption>Example ${_+1}</figcaption>
      <pre>${h.split(`
`).map(c=>i`<span class=${en(c)}>${c}</span>${`
`}`)}</pre></figure>`):i`<p class="muted">None.</p>`}
  </article>`}function Ue({label:e,confirm:t,onConfirm:n,busy:a}){let[o,s]=y(!1);return o?i`<span class="confirm" role="group" aria-label=${t}>${t}
    <button type="button" class="danger" autofocus onClick=${()=>{s(!1),n()}}>Yes</button>
    <button type="button" onClick=${()=>s(!1)}>No</button></span>`:i`<button type="button" class="danger" onClick=${()=>s(!0)} disabled=${a}>${e}</button>`}function nn({query:e,setQuery:t}){let{key:n}=q(),a=B(async s=>(await D(n,"query($q: String!) { route(query: $q, first: 5) { agent { handle } score fits } }",{q:s})).route);return i`<section class="card" aria-labelledby="route-h">
    <h2 id="route-h">Try routing</h2>
    <form class="stack" onSubmit=${s=>{s.preventDefault(),e.trim()&&a.run(e.trim())}}>
      <label for="route-q">A question</label>
      <input id="route-q" value=${e} onInput=${s=>t(s.target.value)} placeholder="Generate a random number between 1 and 10" />
      <button type="submit" disabled=${a.busy}>Route</button>
    </form>
    <${k} error=${a.error} />
    ${a.done?i`<table class="scores" id="route-result"><caption>What the router would pick, best first</caption>
      <thead><tr><th scope="col">Agent</th><th scope="col">Score</th></tr></thead>
      <tbody>${a.done.map(s=>i`<tr data-agent=${s.agent.handle}><td><a href=${"#/agents/"+s.agent.handle}>${s.agent.handle}</a></td><td><${ge} score=${s.score} fits=${s.fits} /></td></tr>`)}</tbody>
      </table>${a.done.length?null:i`<p class="muted">No agent has sample queries to compare with.</p>`}`:null}
  </section>`}var sn="[a-z0-9][a-z0-9_\\-]*";function an({onDone:e}){let{key:t}=q(),[n,a]=y({handle:"",url:"",kind:"codeshot",published:!1}),o=r=>l=>a({...n,[r]:l.target.type==="checkbox"?l.target.checked:l.target.value}),s=B(async()=>{let r={handle:n.handle.trim(),published:n.published};n.kind==="standalone"?r.queryUrl=n.url.trim():r.funcUrl=n.url.trim();let l=await D(t,"mutation($d: AgentInput!) { createAgent(agentData: $d) { agent { handle kind queries } } }",{d:r});return e(),l.createAgent.agent});return i`<section class="card" aria-labelledby="reg-h">
    <h2 id="reg-h">Register an agent by URL</h2>
    <form class="stack" onSubmit=${r=>{r.preventDefault(),s.run()}}>
      <label for="reg-handle">Handle</label>
      <input id="reg-handle" required pattern=${sn} title="lower-case letters, digits, - and _" value=${n.handle} onInput=${o("handle")} />
      <label for="reg-url">URL</label>
      <input id="reg-url" type="url" required value=${n.url} onInput=${o("url")} placeholder="http://127.0.0.1:8181/" />
      <fieldset><legend>What answers at the URL</legend>
        <label><input type="radio" name="reg-kind" value="codeshot" checked=${n.kind==="codeshot"} onChange=${o("kind")} /> A Code Shot agent: its description at GET /, its funcs</label>
        <label><input type="radio" name="reg-kind" value="standalone" checked=${n.kind==="standalone"} onChange=${o("kind")} /> A standalone agent: it answers queries itself</label>
      </fieldset>
      <label><input type="checkbox" checked=${n.published} onChange=${o("published")} /> Published (every account may use it)</label>
      <button type="submit" disabled=${s.busy}>${s.busy?"Reading its description\u2026":"Register"}</button>
    </form>
    <${k} error=${s.error} />
    ${s.done?i`<p role="status" id="reg-done">Registered <a href=${"#/agents/"+s.done.handle}>${s.done.handle}</a> (${s.done.kind}, ${s.done.queries.length} sample queries).</p>`:null}
  </section>`}function Ct({args:e}){let{key:t}=q(),n=e[0]==="thread"?e[1]:"",a=I(async()=>{let[s,r]=await Promise.all([N(t,"GET","/v1/assistants?limit=100"),N(t,"GET","/v1/threads?limit=100")]);return{assistants:s.data,threads:r.data}},[t]),o=s=>(a.data&&a.data.assistants.find(r=>r.id===s)||{}).name||s;return i`<${O} title=${n?`Thread \xB7 ${n}`:"Assistants"}>
    <${k} error=${a.error} />
    <div class="split">
      <aside class="side" aria-label="Assistants and threads">
        <h2>Assistants</h2>
        ${a.data?i`<ul class="plain">${a.data.assistants.map(s=>i`<li><strong>${s.name||s.id}</strong> <span class="muted">${s.model}</span>
          <details><summary>Details</summary><${W} data=${{id:s.id,instructions:s.instructions,tools:s.tools.map(r=>r.type),created:A(s.created_at)}} /></details></li>`)}
          ${a.data.assistants.length?null:i`<li class="muted">None yet: create one with any OpenAI SDK pointed at /v1.</li>`}</ul>`:i`<${R} />`}
        <h2>Threads</h2>
        ${a.data?i`<ul class="sessions">${a.data.threads.map(s=>i`<li class=${s.id===n?"current":""}>
          <a href=${"#/assistants/thread/"+s.id} aria-current=${s.id===n?"page":void 0}>${s.id}</a> <span class="muted">${A(s.created_at)}</span></li>`)}
          ${a.data.threads.length?null:i`<li class="muted">No threads yet.</li>`}</ul>`:null}
      </aside>
      <div class="main-col">
        ${n?i`<${on} key=${n} id=${n} name=${o} />`:i`<p>Pick a thread to see its messages and runs.</p>`}
      </div>
    </div>
  <//>`}function on({id:e,name:t}){let{key:n}=q(),a=I(async()=>{let o="/v1/threads/"+encodeURIComponent(e),[s,r]=await Promise.all([N(n,"GET",o+"/messages?order=asc&limit=100"),N(n,"GET",o+"/runs?order=asc&limit=100")]);return{messages:s.data,runs:r.data}},[n,e]);return a.error?i`<${k} error=${a.error} />`:a.data?i`<div>
    <p class="row"><button type="button" onClick=${a.reload}>Refresh</button></p>
    <h2>Messages</h2>
    <ol class="messages">${a.data.messages.map(o=>i`<li class=${"msg "+(o.role==="user"?"query":"response")}>
      <div class="meta"><strong>${o.role==="assistant"?t(o.assistant_id):o.role}</strong> · ${A(o.created_at)} · ${o.status}${o.run_id?i` · run <code>${o.run_id}</code>`:null}</div>
      <div class="body">${o.content.map(s=>s.type==="text"?s.text.value:i`<${W} data=${s} />`)}</div></li>`)}
      ${a.data.messages.length?null:i`<li class="muted">No messages.</li>`}</ol>
    <h2>Runs</h2>
    ${a.data.runs.map(o=>i`<${ln} key=${o.id} run=${o} thread=${e} name=${t} />`)}
    ${a.data.runs.length?null:i`<p class="muted">No runs.</p>`}
  </div>`:i`<${R} what="the thread" />`}function rn(e){let t=[["queued",e.created_at]];return e.started_at&&t.push(["in_progress",e.started_at]),e.status==="requires_action"&&t.push(["requires_action",null]),e.status==="cancelling"&&t.push(["cancelling",null]),e.cancelled_at&&t.push(["cancelled",e.cancelled_at]),e.failed_at&&t.push(["failed",e.failed_at]),e.completed_at&&t.push(["completed",e.completed_at]),e.status==="expired"&&t.push(["expired",e.expires_at]),e.status==="incomplete"&&t.push(["incomplete",e.completed_at]),t}function ln({run:e,thread:t,name:n}){let{key:a}=q(),[o,s]=y(!1),r=I(()=>o?N(a,"GET",`/v1/threads/${encodeURIComponent(t)}/runs/${encodeURIComponent(e.id)}/steps?order=asc&limit=100`):Promise.resolve(null),[a,t,e.id,o]);return i`<article class="card run">
    <h3><code>${e.id}</code> <span class=${"badge status-"+e.status}>${e.status}</span></h3>
    <p class="muted">${n(e.assistant_id)} · model ${e.model}${e.usage?` \xB7 ${e.usage.total_tokens} tokens`:""}</p>
    ${e.last_error?i`<p class="error">${e.last_error.code}: ${e.last_error.message}</p>`:null}
    <h4>Status history</h4>
    <ol class="history">${rn(e).map(([l,u])=>i`<li><span class=${"badge status-"+l}>${l}</span> ${u?A(u):i`<span class="muted">now</span>`}</li>`)}</ol>
    <button type="button" aria-expanded=${o} onClick=${()=>s(!o)}>${o?"Hide steps":"Show steps"}</button>
    ${o&&r.error?i`<${k} error=${r.error} />`:null}
    ${o&&r.data?i`<ol class="steps">${r.data.data.map(l=>i`<li>
      <strong>${l.type==="tool_calls"?"Tool calls":"Message"}</strong> <span class=${"badge status-"+l.status}>${l.status}</span>
      <span class="muted">${A(l.created_at)}${l.completed_at?` \u2192 ${A(l.completed_at)}`:""}</span>
      <${cn} d=${l.step_details} />
      ${l.last_error?i`<p class="error">${l.last_error.message}</p>`:null}
    </li>`)}${r.data.data.length?null:i`<li class="muted">No steps.</li>`}</ol>`:null}
  </article>`}function cn({d:e}){return e?e.type==="message_creation"?i`<p class="muted">wrote message <code>${e.message_creation.message_id}</code></p>`:e.type==="tool_calls"?i`<ul>${e.tool_calls.map(t=>i`<li>${t.type==="function"?i`<code>${t.function.name}(${t.function.arguments})</code> → ${t.function.output===null||t.function.output===void 0?i`<span class="muted">waiting for its output</span>`:i`<code>${t.function.output}</code>`}`:i`<${W} data=${t} />`}</li>`)}</ul>`:i`<${W} data=${e} />`:null}function Tt({args:e}){let{me:t}=q(),n=e[0]==="account"?e[1]:"";return t.admin?i`<${O} title="Operations">
    <div class="grid2">
      <${un} />
      <${dn} />
    </div>
    <${pn} selected=${n} />
    ${n?i`<${qt} key=${n} account=${n} own=${n===t.account_id} />`:null}
    <${_n} />
  <//>`:i`<${O} title="Operations">
      <p>Operations (accounts, usage, projections, the dead-letter queue) need an admin key. You are signed
        in as <strong>${t.username}</strong> (account <code>${t.account_id}</code>). Your own keys:</p>
      <${qt} account=${t.account_id} own=${!0} />
    <//>`}function un(){let e=I(fe,[]);return i`<section class="card" aria-labelledby="health-h">
    <h2 id="health-h">Node health</h2>
    ${e.data?i`<p id="node-ready" class=${e.data.ready?"ok":"error"}>${e.data.ready?"Ready":"Not ready"}${e.data.status.reason?`: ${e.data.status.reason}`:""}</p>`:i`<${R} />`}
    <${k} error=${e.error} />
    <button type="button" onClick=${e.reload}>Check again</button>
  </section>`}function dn(){let{key:e}=q(),t=I(()=>N(e,"GET","/admin/projections"),[e]);return i`<section class="card" aria-labelledby="proj-h">
    <h2 id="proj-h">Projections</h2>
    <${k} error=${t.error} />
    ${t.data?i`<table class="grid" id="projections"><caption class="sr-only">Read models and how far behind the log they are</caption>
      <thead><tr><th scope="col">Read model</th><th scope="col">Applied up to</th><th scope="col">Lag (events)</th><th scope="col">Generation</th><th scope="col">Leader</th></tr></thead>
      <tbody>${t.data.projections.map(n=>i`<tr><td>${n.name}</td><td>${n.applied_sequence}</td>
        <td class=${n.pending?"warn":"ok"}>${n.pending}</td><td>${n.generation}</td><td>${n.leader||i`<span class="muted">none</span>`}</td></tr>`)}</tbody>
    </table>`:i`<${R} />`}
    <button type="button" onClick=${t.reload}>Refresh</button>
  </section>`}function pn({selected:e}){let{key:t}=q(),n=I(async()=>{let[r,l]=await Promise.all([N(t,"GET","/admin/accounts"),N(t,"GET","/admin/usage")]),u=new Map(l.accounts.map(p=>[p.account_id,p]));return{day:l.day,accounts:r.accounts.map(p=>({...p,usage:u.get(p.id)}))}},[t]),[a,o]=y({name:"",limit:""}),s=B(async()=>{let r={name:a.name.trim()};a.limit&&(r.daily_query_limit=Number(a.limit));let l=await N(t,"POST","/admin/accounts",r);return o({name:"",limit:""}),n.reload(),l});return i`<section class="card" aria-labelledby="acct-h">
    <h2 id="acct-h">Accounts and usage${n.data?` (${n.data.day}, UTC)`:""}</h2>
    <${k} error=${n.error} />
    ${n.data?i`<table class="grid" id="accounts"><caption class="sr-only">Accounts, their daily query use against their quota, and their keys</caption>
      <thead><tr><th scope="col">Account</th><th scope="col">Queries today / quota</th><th scope="col">Requests per minute per key</th><th scope="col">Keys</th><th scope="col">Created</th></tr></thead>
      <tbody>${n.data.accounts.map(r=>{let l=r.usage||{},u=r.keys.filter(p=>!p.revoked_at).length;return i`<tr class=${r.id===e?"current":""}><td><a href=${"#/operations/account/"+r.id} aria-current=${r.id===e?"true":void 0}>${r.name}</a>${r.admin?i` <span class="badge">admin</span>`:null} <code class="muted">${r.id}</code></td>
          <td><meter min="0" max=${l.daily_query_limit||1} value=${l.daily_used_queries||0} aria-label=${`${r.name}: ${l.daily_used_queries} of ${l.daily_query_limit} queries today`}></meter> ${l.daily_used_queries} / ${l.daily_query_limit}</td>
          <td>${r.requests_per_minute||i`<span class="muted">default</span>`}</td><td>${u}${r.keys.length>u?i` <span class="muted">(+${r.keys.length-u} revoked)</span>`:null}</td><td>${A(r.created_at)}</td></tr>`})}</tbody></table>`:i`<${R} what="accounts" />`}
    <form class="inline" onSubmit=${r=>{r.preventDefault(),s.run()}}>
      <label for="new-account">New account</label>
      <input id="new-account" required value=${a.name} onInput=${r=>o({...a,name:r.target.value})} />
      <label for="new-limit">Daily query quota</label>
      <input id="new-limit" type="number" min="1" placeholder="default" value=${a.limit} onInput=${r=>o({...a,limit:r.target.value})} />
      <button type="submit" disabled=${s.busy}>Create account</button>
    </form>
    <${k} error=${s.error} />
    ${s.done?i`<div role="status"><p>Created account <code>${s.done.account_id}</code>. Its key is shown this once:</p>
      <${oe} id="new-account-key" label="API key of the new account" value=${s.done.key} /></div>`:null}
  </section>`}function qt({account:e,own:t}){let{key:n,me:a}=q(),o=t?"":"?account="+encodeURIComponent(e),s=I(()=>N(n,"GET","/admin/keys"+o),[n,e]),[r,l]=y(""),u=B(async()=>{let d=await N(n,"POST","/admin/keys"+o,{name:r.trim()});return l(""),s.reload(),d}),p=B(async d=>(await N(n,"DELETE","/admin/keys/"+encodeURIComponent(d)+o),s.reload(),`Revoked ${d}.`));return i`<section class="card" aria-labelledby="keys-h">
    <h2 id="keys-h">Keys of ${t?"your account":s.data&&s.data.name?s.data.name:i`<code>${e}</code>`}</h2>
    <${k} error=${s.error} />
    ${s.data?i`<table class="grid" id="keys"><caption class="sr-only">Keys (stored as hashes: only a hint of each is known)</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
      <tbody>${s.data.keys.map(d=>i`<tr data-key-id=${d.id}><td><code>${d.id}</code> <span class="muted">${d.hint}</span></td><td>${d.name||""}</td><td>${A(d.created_at)}</td>
        <td>${d.revoked_at?i`<span class="badge">revoked ${A(d.revoked_at)}</span>`:d.id===a.key_id?i`<span class="muted">this console's key</span>`:i`<${Ue} label=${"Revoke "+d.id} confirm=${`Revoke ${d.id}? Clients using it stop working.`} onConfirm=${()=>p.run(d.id)} busy=${p.busy} />`}</td></tr>`)}</tbody>
    </table>`:i`<${R} what="keys" />`}
    <p aria-live="polite" class="muted">${p.done||""}</p>
    <${k} error=${p.error} />
    <form class="inline" onSubmit=${d=>{d.preventDefault(),u.run()}}>
      <label for="new-key">New key named</label>
      <input id="new-key" value=${r} onInput=${d=>l(d.target.value)} placeholder="laptop" />
      <button type="submit" disabled=${u.busy}>Issue key</button>
    </form>
    <${k} error=${u.error} />
    ${u.done?i`<div role="status"><${oe} id="new-key-value" label=${`Key ${u.done.key_id} (shown this once)`} value=${u.done.key} /></div>`:null}
  </section>`}function _n(){let{key:e}=q(),t=I(()=>N(e,"GET","/admin/dlq"),[e]),n=B(async a=>{let o=await N(e,"POST",`/admin/dlq/${a}/redrive`);return t.reload(),`Handed event ${o.redriven.event_seq} back to ${o.redriven.handler}.`});return i`<section class="card" aria-labelledby="dlq-h">
    <h2 id="dlq-h">Dead-letter queue</h2>
    <p class="muted">Events a handler gave up on after its retries. Re-drive one when its cause is fixed.</p>
    <${k} error=${t.error||n.error} />
    <p aria-live="polite">${n.done||""}</p>
    ${t.data?t.data.dead_letters.length?i`<table class="grid" id="dlq"><caption class="sr-only">Dead letters</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Handler</th><th scope="col">Event</th><th scope="col">Why</th><th scope="col">Deliveries</th><th scope="col">When</th><th scope="col"></th></tr></thead>
      <tbody>${t.data.dead_letters.map(a=>i`<tr><td>${a.seq}</td><td>${a.handler}</td><td>${a.event_type} <code class="muted">${a.aggregate}</code> (seq ${a.event_seq})</td>
        <td>${a.reason}</td><td>${a.deliveries}</td><td>${A(a.poisoned_at)}</td>
        <td><button type="button" onClick=${()=>n.run(a.seq)} disabled=${n.busy}>Re-drive ${a.seq}</button></td></tr>`)}</tbody>
    </table>`:i`<p id="dlq-empty">Empty: every handler kept up.</p>`:i`<${R} />`}
    <button type="button" onClick=${t.reload}>Refresh</button>
  </section>`}var Le=[["chat","Chat",bt],["timeline","Timeline",wt],["agents","Agents",xt],["assistants","Assistants",Ct],["operations","Operations",Tt]],At=()=>location.hash.replace(/^#\/?/,"").split("/").map(decodeURIComponent).filter(Boolean);function hn(){let[e,t]=y(At());return E(()=>{let n=()=>t(At());return addEventListener("hashchange",n),()=>removeEventListener("hashchange",n)},[]),e}function fn({onSignIn:e,error:t}){let[n,a]=y(""),[o,s]=y(!1),[r,l]=y(null);return E(()=>{fe().then(l,()=>l({ready:!1,status:{reason:"the node does not answer"}}))},[]),i`<main id="main" class="signin">
    <h1>Contrail console</h1>
    <form onSubmit=${async p=>{p.preventDefault(),s(!0),await e(n.trim()),s(!1)}} aria-describedby="where-key">
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" spellcheck="false" required value=${n}
        onInput=${p=>a(p.target.value)} autofocus />
      <button type="submit" disabled=${o}>${o?"Signing in\u2026":"Sign in"}</button>
      <${k} error=${t} />
    </form>
    <section id="where-key" class="help">
      <h2>Where is my key?</h2>
      <p>On its first start, <code>contrail serve</code> creates an admin account and writes its key
        to <code>contrail-data/admin.key</code> (in the node's <code>--data-dir</code>; mode 0600). Print it with:</p>
      <pre>cat contrail-data/admin.key</pre>
      <p>With it, make a key for a user: <code>contrail accounts create NAME</code> (the key is the last line), or in
        Operations once signed in. The key stays in this tab only (session storage) until you sign out.</p>
    </section>
    <p class="muted" aria-live="polite">${r?r.ready?"Node ready.":`Node not ready: ${r.status.reason||r.status.status}`:""}</p>
  </main>`}function $n({session:e,route:t,onSignOut:n,lost:a}){let[o,...s]=t,r=Le.find(u=>u[0]===o)||Le[0],l=r[2];return E(()=>{document.title=`${r[1]} \xB7 Contrail`},[r]),i`<${De.Provider} value=${e}>
    <a class="skip" href="#main" onClick=${u=>{u.preventDefault(),document.querySelector("main h1")?.focus()}}>Skip to content</a>
    <header class="top">
      <span class="brand">Contrail</span>
      <nav aria-label="Pages"><ul>${Le.map(([u,p])=>i`<li><a href=${"#/"+u} aria-current=${u===r[0]?"page":void 0}>${p}</a></li>`)}</ul></nav>
      <span class="who">${e.me.username||e.me.account_id}${e.me.admin?i` <span class="badge">admin</span>`:null}</span>
      <button type="button" class="signout" onClick=${n}>Sign out</button>
    </header>
    ${a?i`<p class="error banner" role="alert">${a} <button type="button" onClick=${()=>location.reload()}>Reconnect</button></p>`:null}
    <main id="main"><${l} args=${s} /></main>
  <//>`}function mn(){let e=hn(),[t,n]=y(_t()),[a,o]=y(null),[s,r]=y(null),[l,u]=y(""),p=async _=>{try{let c=await N(_,"GET","/admin/whoami");ht(_),r(null),o(c),n(_)}catch(c){Ie(),n(""),o(null),r(c instanceof X&&c.status===401?`That key was refused: ${c.message}. Check that you copied all of it.`:c)}};E(()=>{t&&!a&&p(t)},[]);let d=ee(()=>!t||!a?null:{key:t,me:a,subs:new $e(t,_=>u(`Lost the live connection to the node (${_}).`))},[t,a]);E(()=>()=>d&&d.subs.close(),[d]),E(()=>{document.body.dataset.ready=d?"console":t?"checking":"signin",performance.getEntriesByName("console-interactive").length||performance.mark("console-interactive")});let h=()=>{Ie(),n(""),o(null),r(null),location.hash=""};return d?i`<${$n} session=${d} route=${e} onSignOut=${h} lost=${l} />`:t&&!s?i`<main id="main"><p class="muted">Signing in…</p></main>`:i`<${fn} onSignIn=${p} error=${s} />`}Ye(i`<${mn} />`,document.getElementById("app"));})();
