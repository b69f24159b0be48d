(()=>{var q,Qe,Kt,K,Se,he,Ye,ue,Xe,qe,Ce,Ze,oe=Symbol.for("pv"),_e={},me=[],Wt=/^m(i|n|o|s|text|space)$/,Ee=Array.isArray,Ae=me.slice,Z=Object.assign;function X(e){e&&e.parentNode&&e.remove()}function et(e,t,s){var n,r,o,i={},l=arguments.length;for(o in t)o=="key"?n=t[o]:o=="ref"&&typeof e!="function"?r=t[o]:i[o]=t[o];return l>2&&(i.children=l>3?Ae.call(arguments,2):s),ae(e,i,n,r,null)}function ae(e,t,s,n,r){var o={type:e,props:t,key:s,ref:n,__k:null,__:null,__b:0,__e:null,__c:null,constructor:oe,__v:r||++Qe,__i:-1,__u:0};return!r&&q.vnode&&q.vnode(o),o}function fe(e){return e.children}function pe(e,t){this.props=e,this.context=t,this.__g=0}function W(e,t){if(t==null)return e.__&&W(e.__,e.__i+1);for(var s;t<e.__k.length;t++)if((s=e.__k[t])&&s.__e)return s.__e;return typeof e.type!="function"||e.props.__P?null:W(e)}function zt(e){var t,s=e.__v,n=s.__e,r=[],o=[],i=e.__P;i&&((t=Z({constructor:oe},s)).__v=s.__v+1,q.vnode&&q.vnode(t),Ie(i,t,s,e.__n,i.namespaceURI,32&s.__u?[n]:null,r,n||W(s),32&s.__u,o),t.__v=s.__v,t.__.__k[t.__i]=t,rt(r,t,o),s.__=s.__e=null,t.__e!=n&&tt(t))}function tt(e){if((e=e.__)&&e.__c&&!e.props.__P)return e.__e=null,e.__k.some(function(t){return t&&(e.__e=t.__e)}),tt(e)}function Te(e){(8&e.__g||(e.__g|=8,K.push(e),he++))&&Se==q.debounceRendering||((Se=q.debounceRendering)||queueMicrotask)(st)}function st(){try{for(var e,t=1;K.length;)K.length>t&&K.sort(Ye),e=K.shift(),t=K.length,8&e.__g&&zt(e)}finally{(he=K.length)&&(Se||queueMicrotask)(st)}}function nt(e,t,s,n,r,o,i,l,c,p,d){var $,h,u,y,_,m,f=n.__k||me,w=t.length;for(c=Qt(s,t,f,c,w),$=0;$<w;$++)(u=s.__k[$])!=null&&(h=~u.__i&&f[u.__i]||_e,u.__i=$,m=Ie(e,u,h,r,o,i,l,c,p,d),y=u.__e,(h.ref!=u.ref||8&h.__u)&&(h.ref&&Ne(h.ref,null,u,h),u.ref&&d.push(u.ref,u.__c||y,u)),_=_||y,4&u.__u?(c=at(u,c,e,!h.__v),h.__e&&(h.__e=null)):typeof u.type=="function"&&m!==void 0?c=m:y&&(c=y.nextSibling),u.__u&=-21);return s.__e=_,c}function Qt(e,t,s,n,r){var o,i,l,c,p,d,$,h,u,y=s.length,_=y,m=0,f=0,w=e.__k=Array(r);for(o=0;o<r;o++)(i=t[o])!=null&&typeof i!="boolean"&&typeof i!="function"?(typeof i!="object"||i.constructor===String?i=w[o]=ae(null,i):Ee(i)?i=w[o]=ae(fe,{children:i}):i.constructor===oe&&i.__b?i=w[o]=ae(i.type,i.props,i.key,i.ref,i.__v):w[o]=i,c=o+m,i.__=e,i.__b=e.__b+1,l=null,~(p=i.__i=Yt(i,s,c,_))&&(_--,(l=s[p])&&(l.__u|=2)),l&&l.__v?(i.__u|=16,p==c-1?m--:p==c+1?m++:p!=c&&(p>c?m--:m++,f=1)):(~p||(r>y?m--:r<y&&m++),typeof i.type!="function"&&(i.__u|=4))):w[o]=null;if(f){for(d=[],$=[],o=0;o<r;o++)if((i=w[o])&&16&i.__u){for(m=0,h=d.length;m<h;)d[u=m+h>>1]<i.__i?m=u+1:h=u;d[m]=i.__i,$[o]=m+1}for(m=d.length;o--;)$[o]&&($[o]==m?m--:w[o].__u|=4)}if(_)for(o=0;o<y;o++)!(l=s[o])||2&l.__u||(l.__e==n&&(n=W(l)),Pe(l,l));return n}function at(e,t,s,n){var r,o,i,l;if(typeof e.type=="function"){if(e.props.__P)return t;if(r=e.__k)for(o=0;o<r.length;o++)r[o]&&(r[o].__=e,t=at(r[o],t,s,!1));return t}for(t&&!t.parentNode&&(t=W(e))&&!t.parentNode&&(t=null),i=e.__e,l=t;l&&l.nodeType==8;)l=l.nextSibling;for(i!=l&&(!n&&s.moveBefore&&i.parentNode?s.moveBefore(i,t):s.insertBefore(i,t||null)),t=i;(t=t&&t.nextSibling)&&t.nodeType==8&&!t.data.startsWith("$s"););return t}function Yt(e,t,s,n){var r,o=e.key,i=e.type,l=t[s],c=l&&!(2&l.__u);if(l===null&&o==null||c&&o==l.key&&i==l.type)return s;if(n>(c?1:0)){for(r=s-1;r>=0;r--)if((l=t[r])&&!(2&l.__u)&&o==l.key&&i==l.type)return r;for(r=s+1;r<t.length;r++)if((l=t[r])&&!(2&l.__u)&&o==l.key&&i==l.type)return r}return-1}function ze(e,t,s){s==null&&(s=""),t[0]=="-"?e.setProperty(t,s):e[t]=s}function de(e,t,s,n,r){var o,i;if(t=="style")if(typeof s=="string")e.style.cssText=s;else{if(typeof n=="string"&&(e.style.cssText=n=""),n)for(t in n)s&&t in s||ze(e.style,t);if(s)for(t in s)n&&s[t]==n[t]||ze(e.style,t,s[t])}else if(t[0]=="o"&&t[1]=="n")typeof s!="function"&&(s=null),typeof n!="function"&&(n=null),(e.__e||(e.__e={}))[t]=s,s&&n||(i=Ce[t]||(Ce[t]=Xt(t)),(e.__a||(e.__a={}))[t]=qe,o=t!=(t=t.replace(Xe,"$1")),(t=t.slice(2))[0]<"a"&&(t=t.toLowerCase()),s?e.addEventListener(t,i,o):e.removeEventListener(t,i,o));else{if(r=="http://www.w3.org/2000/svg")t=t.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(t!="width"&&t!="height"&&t!="href"&&t!="list"&&t!="form"&&t!="tabIndex"&&t!="download"&&t!="rowSpan"&&t!="colSpan"&&t!="role"&&t!="popover"&&t in e)try{return void(e[t]=s??"")}catch{}if(typeof s=="function")return;s==null||s===!1&&t[4]!="-"?e.removeAttribute(t):e.setAttribute(t,t=="popover"&&s==1?"":s)}}function Xt(e){return function(t){var s=this.__e;if(s){if(s=s[e],t[ue]==null)t[ue]=qe++;else if(t[ue]<this.__a[e])return;return s(q.event?q.event(t):t)}}}function Ie(e,t,s,n,r,o,i,l,c,p){var d,$,h,u,y,_,m,f,w,A,E,I,U,O,T,J,L,Y,V=t.type;if(t.constructor!==oe)return null;128&s.__u&&(c=32&s.__u,d=s.__c.__z)&&(t.__u|=c,$=o=[],d.nodeType==8?l=$e(d,o):o.push(d),l=o[0]||l),(d=q.__b)&&d(t);e:if(typeof V=="function"){h=i.length;try{if(f=t.props,w=(d=V.prototype)&&d.render,A=(d=V.contextType)&&n[d.__c],E=d?A?A.props.value:d.__:n,(u=s.__c)?(t.__c=u,2&u.__g&&(u.__g|=1)):(w?t.__c=u=new V(f,E):(t.__c=u=new pe(f,E),u.constructor=V,u.render=es),A&&A.sub(u),u.state||(u.state={}),u.__n=n,u.__g|=8,u.__h=[],u.__k=[]),w&&(u.__s||(u.__s=u.state),V.getDerivedStateFromProps&&(u.__s==u.state&&(u.__s=Z({},u.__s)),Z(u.__s,V.getDerivedStateFromProps(f,u.__s)))),y=u.props,_=u.state,u.__v=t,s.__c){if(f!==y&&w&&!V.getDerivedStateFromProps&&u.componentWillReceiveProps&&u.componentWillReceiveProps(f,E),t.__v==s.__v&&!(8&u.__g)||!(4&u.__g)&&u.shouldComponentUpdate&&u.shouldComponentUpdate(f,u.__s,E)===!1){t.__v!=s.__v&&(u.props=f,u.state=u.__s,u.__g&=-9),t.__e=s.__e,t.__k=s.__k,t.__k.some(function(B){B&&(B.__=t)}),me.push.apply(u.__h,u.__k),u.__k=[],u.__h.length&&i.push(u),l=W(s);break e}u.componentWillUpdate&&u.componentWillUpdate(f,u.__s,E),w&&u.componentDidUpdate&&u.__h.push(function(){u.componentDidUpdate(y,_,m)})}else w&&!V.getDerivedStateFromProps&&u.componentWillMount&&u.componentWillMount(),w&&u.componentDidMount&&u.__h.push(u.componentDidMount);u.context=E,u.props=f,u.__P=e,u.__g&=-5,I=q.__r,U=w?25:0;do u.__g&=-9,I&&I(t),d=u.render(u.props,u.state=u.__s,u.context);while(8&u.__g&&++U<25);w&&(me.push.apply(u.__h,u.__k),u.__k=[]),u.state=u.__s,u.getChildContext&&(n=Z({},n,u.getChildContext())),w&&s.__c&&u.getSnapshotBeforeUpdate&&(m=u.getSnapshotBeforeUpdate(y,_)),O=d&&d.type===fe&&d.key==null?d.props.children:d,f.__P&&(d=l,r=(e=f.__P).namespaceURI,c=o=null,s.props&&s.props.__P!=e&&(s.__k.some(function(B){B&&Pe(B,B)}),s.__k=null),l=s.__k?W(s,0):null),l=nt(e,Ee(O)?O:[O],t,s,n,r,o,i,l,c,p),f.__P&&(t.__e=null,l=d),t.__u&=-161,$&&$.some(X),u.__h.length&&i.push(u),1&u.__g&&(u.__g&=-4)}catch(B){if(i.length=h,t.__v=null,c||o)if(B&&B.then){if(t.__u|=128|c,o){for(~(L=o.indexOf(l||void 0))||(L=o.length);(Y=o[L-1])&&Y.nodeType==8;)L--;for(;L<o.length;L++)if(Y=o[L])if(o[L]=null,T){if(Y==J)break}else{if(Y.nodeType!=8)break;Y.data.startsWith("$s")&&(J=$e(T=Y))}}if(!T){for(;l&&l.nodeType==8&&l.nextSibling;)l=l.nextSibling;T=l}(d=$e(T=t.__c.__z||(t.__c.__z=T)))?(t.__e=T,l=d):t.__e=l,l=l&&l.nextSibling}else o&&o.some(X);else t.__e=s.__e;t.__k||(t.__k=s.__k||[]),B&&B.then||ot(t),q.__e(B,t,s)}}else l=t.__e=Zt(s.__e,t,s,n,r,o,i,c,p,e);return(d=q.diffed)&&d(t),l}function $e(e,t){if(e&&e.nodeType==8&&e.data.startsWith("$s"))for(var s=1;e=e.nextSibling;){if(e.nodeType==8){if(e.data.startsWith("$s"))s++;else if(e.data.startsWith("/$s")&&!--s)return e}t&&t.push(e)}}function ot(e){e&&(e.__c&&(e.__c.__g|=4),e.__k&&e.__k.some(ot))}function rt(e,t,s){for(var n=0;n<s.length;)Ne(s[n++],s[n++],s[n++]);q.__c&&q.__c(t,e),e.some(function(r){try{e=r.__h,r.__h=[],e.some(function(o){o.call(r)})}catch(o){q.__e(o,r.__v)}})}function Zt(e,t,s,n,r,o,i,l,c,p){var d,$,h,u,y,_,m,f,w=s.props||_e,A=t.props,E=t.type;if(E=="svg"?r="http://www.w3.org/2000/svg":E=="math"?r="http://www.w3.org/1998/Math/MathML":r||(r="http://www.w3.org/1999/xhtml"),o){for(d=0;d<o.length;d++)if((y=o[d])&&(E?y.localName==E:y.nodeType==3)){e=y,o[d]=null;break}}if(!e){if(f=p.ownerDocument||document,!E)return f.createTextNode(A);e=f.createElementNS(r,E,A.is?A:p),l&&(q.__m&&q.__m(t,o),l=!1),o=null}if(E){if(p=E=="template"&&e.content||e,o=E=="textarea"&&A.defaultValue!=null?null:o&&Ae.call(p.childNodes),!l&&o)for(w={},d=0;d<e.attributes.length;d++)w[(y=e.attributes[d]).name]=y.value;for(d in w)y=w[d],d=="dangerouslySetInnerHTML"?h=y:d=="children"||d in A||d=="value"&&"defaultValue"in A||d=="checked"&&"defaultChecked"in A||de(e,d,null,y,r);for(d in A)y=A[d],d=="children"?u=y:d=="dangerouslySetInnerHTML"?$=y:d=="value"?_=y:d=="checked"?m=y:l&&typeof y!="function"||w[d]===y||de(e,d,y,w[d],r);$?(l||h&&($.__html==h.__html||$.__html==e.innerHTML)||(e.innerHTML=$.__html),t.__k=[]):(h&&(e.textContent=""),(E=="foreignObject"||r=="http://www.w3.org/1998/Math/MathML"&&Wt.test(E))&&(r="http://www.w3.org/1999/xhtml"),nt(p,Ee(u)?u:[u],t,s,n,r,o,i,o?o[0]:s.__k&&W(s,0),l,c),o&&o.some(X)),l&&E!="textarea"||(d="value",E=="progress"&&_==null?e.removeAttribute(d):_==null||_===e[d]&&(E!="progress"||_)||de(e,d,_,w[d],r),d="checked",m!=null&&m!=e[d]&&de(e,d,m,w[d],r))}else w===A||l&&e.data==A||(e.data=A);return e}function Ne(e,t,s,n){try{typeof e=="function"?t?t.__x=e(t)||1:n&&(n=n.__c||n.__e)&&(t=n.__x)&&(n.__x=null,typeof t=="function"?t():e(null)):e.current=t}catch(r){q.__e(r,s)}}function Pe(e,t,s){var n,r,o,i;if(q.unmount&&q.unmount(e),!(n=e.ref)||n.current&&n.current!=e.__e||Ne(n,null,t,e),n=e.__c){if(n.componentWillUnmount)try{n.componentWillUnmount()}catch(l){q.__e(l,t)}n.__P=n.__n=null}if(n=e.__k)for(i=0;i<n.length;i++)n[i]&&Pe(n[i],t,typeof e.type!="function"||s&&!e.props.__P);!s&&(n=e.__c)&&(n=n.__z)&&(r=$e(n,o=[]))&&(n==e.__e&&o.some(X),X(r),X(n)),s||X(e.__e),e.__e=e.__c=e.__=null}function es(e,t,s){return this.constructor(e,s)}function it(e,t){var s,n,r,o;q.__&&q.__(e,t),t.nodeType==9&&(t=t.documentElement),n=(s=e&&32&e.__u)?null:t.__k,t.__k=ae(fe,{children:[e]}),r=[],o=[],Ie(t,t.__k,n||_e,_e,t.namespaceURI,n?null:t.firstChild?Ae.call(t.childNodes):null,r,n?n.__e:t.firstChild,s,o),rt(r,t.__k,o),t.__k.props.children=null}function lt(e){function t(s){var n,r;return this.getChildContext||(n=new Set,(r={})[t.__c]=this,this.getChildContext=function(){return r},this.shouldComponentUpdate=function(o){this.props.value!=o.value&&n.forEach(function(i){i.__g|=4,Te(i)})},this.sub=function(o){n.add(o);var i=o.componentWillUnmount;o.componentWillUnmount=function(){n.delete(o),i&&i.call(o)}}),s.children}return t.__c="__cC"+Ze++,t.__=e,t.Provider=(t.Consumer=function(s,n){return s.children(n)}).contextType=t,t}q={__e:function(e,t,s,n){for(var r,o,i;t=t.__;)if((r=t.__c)&&!(1&r.__g)){r.__g|=4;try{if((i=(o=r.constructor)&&o.getDerivedStateFromError)&&r.setState(o.getDerivedStateFromError(e)),r.componentDidCatch&&(r.componentDidCatch(e,n||{}),i=1),i&&8&r.__g)return void(r.__g|=2)}catch(l){e=l}}throw he=0,e}},Qe=0,Kt=function(e){return e!=null&&e.constructor===oe},pe.prototype.setState=function(e,t){var s=this.__s;s&&s!=this.state||(s=this.__s=Z({},this.state)),typeof e=="function"&&(e=e(Z({},s),this.props)),e&&(Z(s,e),this.__v&&(t&&this.__k.push(t),Te(this)))},pe.prototype.forceUpdate=function(e){this.__v&&(this.__g|=4,e&&this.__h.push(e),Te(this))},pe.prototype.render=fe,K=[],he=0,Ye=function(e,t){return e.__v.__b-t.__v.__b},ue=Symbol(),Xe=/(PointerCapture)$|Capture$/i,qe=0,Ce={},Ze=0;var se,N,Re,ct,De=Object.is,ie=0,gt=[],Me=[],P=q,dt=P.__b,ut=P.__r,pt=P.diffed,$t=P.__c,ht=P.unmount,_t=P.__;function ge(e,t){P.__h&&P.__h(N,e,ie||t),ie=0;var s=N.__H||(N.__H={__:[],__h:[]});return e>=s.__.length&&s.__.push({}),s.__[e]}function g(e){return ie=1,ts(kt,e)}function ts(e,t,s){var n=ge(se++,2);if(n.t=e,!n.__c&&(n.__=[s?s(t):kt(void 0,t),function(o){var i=(n.__N||n.__)[0],l=n.t(i,o);De(i,l)||(n.__N=[l,n.__[1]],n.__c.setState({}))}],n.__c=N,!N.__f)){N.__f=!0;var r=N.shouldComponentUpdate;N.shouldComponentUpdate=function(o,i,l){var c=this.__H;if(!c)return!0;var p=!1,d=this.props!=o;if(c.__.some(function(h){h.__N&&(p=!0,De(h.__[0],h.__N[0])||(d=!0))}),r){var $=r.call(this,o,i,l);return p?$||d:$}return!p||d}}return n.__}function R(e,t){var s=ge(se++,3);!P.__s&&bt(s.__H,t)&&(s.__P=!0,s.__=e,s.u=t,N.__H.__h.push(s))}function G(e){return ie=5,ne(function(){return{current:e}},[])}function ne(e,t){var s=ge(se++,7);return bt(s.__H,t)&&(s.__=e(),s.__H=t),s.__}function yt(e,t){return ie=8,ne(function(){return e},t)}function vt(e){var t=N.context[e.__c],s=ge(se++,9);return s.c=e,t?(s.__==null&&(s.__=!0,t.sub(N)),t.props.value):e.__}function ss(){var e;do{for(;e=Me.shift();)try{re(e)}catch(s){P.__e(s,{__:(e=e.__P)&&e.__v})}for(;e=gt.shift();){var t=e.__H;if(e.__P&&t)try{t.__h.some(re),t.__h.some(Ue),t.__h=[]}catch(s){t.__h=[],P.__e(s,e.__v)}}}while(Me.length)}P.__b=function(e){N=null,dt&&dt(e)},P.__=function(e,t){e&&t.__k&&t.__k.__m&&(e.__m=t.__k.__m),_t&&_t(e,t)},P.__r=function(e){ut&&ut(e),se=0;var t=(N=e.__c).__H;t&&(Re==N?N.__h=[]:(t.__h.some(re),t.__h.some(Ue),se=0),t.__h=[],t.__.some(function(s){s.__N&&(s.__=s.__N),s.u=s.__N=void 0})),Re=N},P.diffed=function(e){pt&&pt(e);var t=e.__c;t&&t.__H&&(t.__H.__h.length&&ft(gt.push(t)),t.__H.__.some(function(s){s.u&&(s.__H=s.u)})),Re=N=null},P.__c=function(e,t){t.some(function(s){try{s.__h.some(re),s.__h=s.__h.filter(function(n){return!n.__||Ue(n)})}catch(n){s.__h=[function(){throw n}]}}),$t&&$t(e,t)},P.unmount=function(e){ht&&ht(e);var t,s,n=e.__c;n&&n.__H&&(n.__H.__.some(function(r){try{if(r.__P&&r.__c){if(s===void 0){for(s=e.__;s&&(!s.__c||!s.__c.__P);)s=s.__;s=s&&s.__c}r.__P=s,ft(Me.push(r))}else re(r)}catch(o){t=o}}),n.__H=void 0,t&&P.__e(t,n.__v))};var mt=typeof requestAnimationFrame=="function";function ns(e){var t,s=function(){clearTimeout(n),mt&&cancelAnimationFrame(t),setTimeout(e)},n=setTimeout(s,35);mt&&(t=requestAnimationFrame(s))}function ft(e){e!=1&&ct==P.requestAnimationFrame||((ct=P.requestAnimationFrame)||ns)(ss)}function re(e){var t=N,s=e.__c;typeof s=="function"&&(e.__c=void 0,s()),N=t}function Ue(e){var t=N;e.__c=e.__(),N=t}function bt(e,t){return!e||e.length!=t.length||t.some(function(s,n){return!De(s,e[n])})}function kt(e,t){return typeof t=="function"?t(e):t}var Oe="contrail.key",wt=()=>sessionStorage.getItem(Oe)||"",xt=e=>sessionStorage.setItem(Oe,e),Le=()=>sessionStorage.removeItem(Oe),ee=class extends Error{constructor(t,s,n,r){super(n),this.status=t,this.code=s||"",this.field=r||""}};function St(e){if(!(e instanceof ee))return`Could not reach the node (${e.message}). Is \`contrail serve\` still running?`;switch(e.status){case 401:return`The node refused the key: ${e.message}. Sign out and sign in with a valid key.`;case 403:return`Not allowed with this key: ${e.message}`;case 429:return`Slow down: ${e.message}`}return e.field?`${e.message} (field ${e.field})`:e.message}async function je(e,t,s,n,r={}){let o={...r};e&&(o.Authorization="Bearer "+e),n!==void 0&&(o["Content-Type"]="application/json");let i;try{i=await fetch(s,{method:t,headers:o,body:n===void 0?void 0:JSON.stringify(n)})}catch(p){throw new Error(p.message||String(p))}let l=await i.text(),c=null;try{c=l?JSON.parse(l):null}catch{c=null}return{res:i,data:c,text:l}}async function k(e,t,s,n){let{res:r,data:o,text:i}=await je(e,t,s,n);if(!r.ok){let l=o&&o.error||{};throw new ee(r.status,l.code||l.type,l.message||i||r.statusText,l.field||l.param)}return o}var as={UNAUTHENTICATED:401,FORBIDDEN:403,NOT_FOUND:404,RATE_LIMITED:429,INTERNAL_SERVER_ERROR:500};async function j(e,t,s={}){return(await Be(e,t,s)).data}async function Be(e,t,s={}){let{res:n,data:r,text:o}=await je(e,"POST","/graphql",{query:t,variables:s}),i=r&&r.errors||[];if(!n.ok||i.length){let c=(i[0]||{}).extensions||{},p=i.length?i.map($=>$.message).join("; "):o||n.statusText,d=n.status!==200?n.status:as[c.code]||400;throw new ee(d,c.code,p,c.field)}return{data:r.data,extensions:r.extensions||{}}}async function ye(){let e=await je("","GET","/readyz");return{ready:e.res.ok,status:e.data||{status:e.text}}}var ve=class{constructor(t,s){this.key=t,this.onClosed=s||(()=>{}),this.next=1,this.subs=new Map,this.closedByUs=!1,this.ready=this.open()}open(){return new Promise((t,s)=>{let n=(location.protocol==="https:"?"wss://":"ws://")+location.host+"/graphql",r=new WebSocket(n,"graphql-transport-ws");this.ws=r;let o=!1;r.onopen=()=>r.send(JSON.stringify({type:"connection_init",payload:{Authorization:"Bearer "+this.key}})),r.onmessage=i=>{let l;try{l=JSON.parse(i.data)}catch{return}switch(l.type){case"connection_ack":o=!0,t(this);break;case"ping":r.send(JSON.stringify({type:"pong"}));break;case"next":{let c=this.subs.get(l.id);c&&l.payload&&l.payload.errors&&l.payload.errors.length?c.error(l.payload.errors.map(p=>p.message).join("; ")):c&&l.payload&&c.next(l.payload.data);break}case"error":{let c=this.subs.get(l.id);this.subs.delete(l.id),c&&c.error((l.payload||[]).map(p=>p.message).join("; ")||"subscription refused");break}case"complete":{let c=this.subs.get(l.id);this.subs.delete(l.id),c&&c.complete&&c.complete();break}}},r.onclose=i=>{let l=i.reason||`the connection closed (code ${i.code})`;if(!o){s(new Error(l));return}for(let c of this.subs.values())c.error("lost the live connection to the node: "+l);this.subs.clear(),this.closedByUs||this.onClosed(l)}})}subscribe(t,s,n){let r=String(this.next++),o=!1;return this.ready.then(()=>{o||(this.subs.set(r,n),this.ws.send(JSON.stringify({id:r,type:"subscribe",payload:{query:t,variables:s}})))},i=>n.error(i.message)),()=>{o=!0,this.subs.delete(r)&&this.ws.readyState===WebSocket.OPEN&&this.ws.send(JSON.stringify({id:r,type:"complete"}))}}close(){this.closedByUs=!0,this.ws.close(1e3,"bye")}};var Tt=function(e,t,s,n){var r;t[0]=0;for(var o=1;o<t.length;o++){var i=t[o++],l=t[o]?(t[0]|=i?1:2,s[t[o++]]):t[++o];i===3?n[0]=l:i===4?n[1]=Object.assign(n[1]||{},l):i===5?(n[1]=n[1]||{})[t[++o]]=l:i===6?n[1][t[++o]]+=l+"":i?(r=e.apply(l,Tt(e,l,s,["",null])),n.push(r),l[0]?t[0]|=2:(t[o-2]=0,t[o]=r)):n.push(l)}return n},Ct=new Map;function qt(e){var t=Ct.get(this);return t||(t=new Map,Ct.set(this,t)),(t=Tt(this,t.get(e)||(t.set(e,t=(function(s){for(var n,r,o=1,i="",l="",c=[0],p=function(h){o===1&&(h||(i=i.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?c.push(0,h,i):o===3&&(h||i)?(c.push(3,h,i),o=2):o===2&&i==="..."&&h?c.push(4,h,0):o===2&&i&&!h?c.push(5,0,!0,i):o>=5&&((i||!h&&o===5)&&(c.push(o,0,i,r),o=6),h&&(c.push(o,h,0,r),o=6)),i=""},d=0;d<s.length;d++){d&&(o===1&&p(),p(d));for(var $=0;$<s[d].length;$++)n=s[d][$],o===1?n==="<"?(p(),c=[c],o=3):i+=n:o===4?i==="--"&&n===">"?(o=1,i=""):i=n+i[0]:l?n===l?l="":i+=n:n==='"'||n==="'"?l=n:n===">"?(p(),o=1):o&&(n==="="?(o=5,r=i,i=""):n==="/"&&(o<5||s[d][$+1]===">")?(p(),o===3&&(c=c[0]),o=c,(c=c[0]).push(2,0,o),o=0):n===" "||n==="	"||n===`
`||n==="\r"?(p(),o=2):i+=n),o===3&&i==="!--"&&(o=4,c=c[0])}return p(),c})(e)),t),arguments,[])).length>1?t:t[0]}var a=qt.bind(et),Fe=lt(null),x=()=>vt(Fe);function C(e,t){let[s,n]=g({data:null,error:null,loading:!0}),r=G(0),o=yt(()=>{let i=++r.current;n(l=>({...l,loading:!0})),e().then(l=>i===r.current&&n({data:l,error:null,loading:!1}),l=>i===r.current&&n({data:null,error:l,loading:!1}))},t);return R(o,[o]),{...s,reload:o}}function F(e){let[t,s]=g({busy:!1,error:null,done:null});return{...t,run:async(...o)=>{s({busy:!0,error:null,done:null});try{let i=await e(...o);return s({busy:!1,error:null,done:i}),i}catch(i){s({busy:!1,error:i,done:null});return}},reset:()=>s({busy:!1,error:null,done:null})}}function v({error:e}){if(!e)return null;let t=typeof e=="string"?e:St(e);return a`<p class="error" role="alert">${t}</p>`}function S({what:e}){return a`<p class="muted" aria-live="polite">Loading ${e||""}…</p>`}function D({title:e,actions:t,children:s}){let n=G(null);return R(()=>n.current&&n.current.focus(),[e]),a`<section class="page">
    <header class="page-head"><h1 tabindex="-1" ref=${n}>${e}</h1>${t?a`<div class="actions">${t}</div>`:null}</header>
    ${s}
  </section>`}var b=e=>{if(e==null||e==="")return"";let t=typeof e=="number"?new Date(e*1e3):new Date(e);return isNaN(t)?String(e):t.toLocaleString()};function be(e){if(e<0&&(e=0),e<1e3)return`+${Math.round(e)}ms`;if(e<6e4)return`+${(e/1e3).toFixed(2)}s`;let t=Math.floor(e/6e4),s=Math.round(e%6e4/1e3);return`+${t}m${String(s).padStart(2,"0")}s`}function ke({score:e,fits:t,label:s}){let n=Math.max(0,Math.min(1,e))*100;return a`<span class="score">
    <span class="bar" aria-hidden="true"><span class=${t?"fill fits":"fill"} style=${{width:n.toFixed(1)+"%"}}></span></span>
    <span class="num">${e.toFixed(3)}</span>
    ${t?a`<span class="badge ok" title="above the router's threshold">fits</span>`:null}
    ${s?a`<span class="sr-only">${s}</span>`:null}
  </span>`}function H({v:e,depth:t=0}){return e==null?a`<span class="muted">—</span>`:typeof e=="string"?e.includes(`
`)||e.length>120?a`<pre class="text">${e}</pre>`:a`<span class="text">${e}</span>`:typeof e!="object"?a`<span class="text">${String(e)}</span>`:t>3?a`<code>${JSON.stringify(e)}</code>`:Array.isArray(e)?e.length?a`<ol class="kv-list">${e.map(s=>a`<li><${H} v=${s} depth=${t+1} /></li>`)}</ol>`:a`<span class="muted">none</span>`:a`<${M} data=${e} depth=${t+1} />`}function M({data:e,depth:t=0}){let s=Object.keys(e||{});return s.length?a`<dl class="kv">${s.map(n=>a`<div><dt>${n}</dt><dd><${H} v=${e[n]} depth=${t} /></dd></div>`)}</dl>`:a`<span class="muted">no data</span>`}var we="handle name frontendAgentId created messages(first: 1) { text }";function xe(e){if(e.name)return e.name;let t=e.messages&&e.messages[0]&&e.messages[0].text.trim().replace(/\s+/g," ");return t?t.length>48?t.slice(0,47).replace(/\s+\S*$/,"").replace(/[\s,;:.!?-]+$/,"")+"\u2026":t:"New session"}function le({label:e,value:t,id:s}){let[n,r]=g(""),o=G(null);return a`<div class="copy">
    <label for=${s}>${e}</label>
    <div class="row"><input id=${s} ref=${o} readonly value=${t} onFocus=${l=>l.target.select()} />
    <button type="button" onClick=${async()=>{o.current.select();try{await navigator.clipboard.writeText(t),r("Copied.")}catch{r(document.execCommand&&document.execCommand("copy")?"Copied.":"Selected: press Ctrl-C to copy.")}}}>Copy</button></div>
    <span class="muted" aria-live="polite">${n}</span>
  </div>`}var He="id text type timestamp sentBy { handle } inReplyTo { id } embeds { key contentType uri }",os=`{ allSessions(first: 50) { ${we} }
  allAgents(first: 1000) { agentId handle name kind } }`;function Et({args:e}){let{key:t}=x(),s=e[0]||"",n=C(()=>j(t,os),[t,s]),[r,o]=g("fixie"),[i,l]=g(""),[c,p]=g(null),d=n.data&&n.data.allAgents||[],$=_=>(d.find(m=>m.agentId===_)||{}).handle||_,h=(n.data&&n.data.allSessions||[]).find(_=>_.handle===s),u=!h||!h.name&&!(h.messages||[]).length,y=async _=>{p(null);try{let m=await j(t,"mutation($a: String) { createSession(sessionData: {frontendAgentId: $a}) { session { handle } } }",{a:r});l(_||""),location.hash="#/chat/"+m.createSession.session.handle}catch(m){p(m)}};return a`<${D} title=${s?`Chat \xB7 ${s}`:"Chat"}>
    <div class="split">
      <aside class="side" aria-label="Sessions">
        <form class="stack" onSubmit=${_=>{_.preventDefault(),y("")}}>
          <label for="chat-agent">Agent for a new session</label>
          <select id="chat-agent" value=${r} onChange=${_=>o(_.target.value)}>
            ${(d.length?d:[{handle:"fixie"}]).map(_=>a`<option value=${_.handle}>${_.handle}${_.name?` \u2014 ${_.name}`:""}</option>`)}
          </select>
          <button type="submit">New session</button>
        </form>
        <${v} error=${c||n.error} />
        <h2>Past sessions</h2>
        ${n.loading&&!n.data?a`<${S} what="sessions" />`:null}
        <ul class="sessions">
          ${(n.data&&n.data.allSessions||[]).map(_=>a`<li class=${_.handle===s?"current":""}>
            <a class="session-title" href=${"#/chat/"+_.handle} aria-current=${_.handle===s?"page":void 0}>${xe(_)}</a>
            <span class="muted">${$(_.frontendAgentId)} · ${b(_.created)} · <code class="id">${_.handle}</code></span>
            <a class="small" href=${"#/timeline/"+_.handle} aria-label=${"Timeline of "+_.handle}>timeline</a>
          </li>`)}
        </ul>
      </aside>
      <div class="main-col">
        ${s?a`<${rs} key=${s} handle=${s} pending=${i} onPendingSent=${()=>l("")} onSent=${u?n.reload:null} />`:a`<${At} ready=${!0} label=${`Message to ${r} (starts a new session)`} onSend=${_=>y(_)} />`}
      </div>
    </div>
  <//>`}function rs({handle:e,pending:t,onPendingSent:s,onSent:n}){let{key:r,subs:o}=x(),[i,l]=g([]),[c,p]=g({}),[d,$]=g(!1),[h,u]=g(""),[y,_]=g(null),m=G(null),f=G(!1),w=I=>l(U=>{let O=new Map(U.map(T=>[T.id,T]));for(let T of I)O.set(T.id,T);return[...O.values()].sort((T,J)=>Date.parse(T.timestamp)-Date.parse(J.timestamp))});R(()=>o.subscribe(`subscription($h: String!) { sessionMessages(handle: $h) { kind sequence
        message { ${He} } delta { messageId inReplyTo index text } } }`,{h:e},{next:U=>{let O=U.sessionMessages;if(O.kind==="ready")j(r,`query($h: String!) { sessionByHandle(handle: $h) { frontendAgentId messages(first: 1000) { ${He} } } }`,{h:e}).then(T=>{if(!T.sessionByHandle){_(`No session ${e} in your account.`);return}u(T.sessionByHandle.frontendAgentId),w(T.sessionByHandle.messages),$(!0)},_);else if(O.kind==="message")w([O.message]),p(T=>{if(!T[O.message.id])return T;let{[O.message.id]:J,...L}=T;return L});else if(O.kind==="delta"){let T=O.delta;m.current&&!m.current.reply&&(m.current.reply=T.messageId),p(J=>{let L=J[T.messageId]||{text:"",inReplyTo:T.inReplyTo,deltas:0};return{...J,[T.messageId]:{...L,text:L.text+T.text,deltas:L.deltas+1}}})}},error:U=>_(U)}),[e]),R(()=>{let I=m.current;I&&I.reply&&c[I.reply]&&!f.current&&(f.current=!0,performance.measure("first-token",{start:I.start,end:performance.now()}),m.current=null)},[c]);let A=async I=>{_(null),m.current={start:performance.now(),reply:null},f.current=!1;try{let U=await j(r,`mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}) { message { ${He} } } }`,{s:e,t:I});return w([U.sendSessionMessage.message]),n&&n(),!0}catch(U){return m.current=null,_(U),!1}};R(()=>{d&&t&&(s(),A(t),document.getElementById("chat-input")?.focus())},[d]);let E=G(null);return R(()=>{let I=E.current;I&&(I.scrollTop=I.scrollHeight)},[i,c]),a`<div class="conversation">
    <p class="muted">Session <code>${e}</code>${h?a` · front agent <code>${h}</code>`:null}${" \xB7 "}<a href=${"#/timeline/"+e}>Timeline of this session</a></p>
    <${v} error=${y} />
    <ol class="messages" ref=${E} aria-label="Messages" aria-live="polite" aria-relevant="additions">
      ${i.map(I=>a`<${is} m=${I} />`)}
      ${Object.entries(c).map(([I,U])=>a`<li class="msg response streaming" data-streaming="true" data-reply-id=${I} aria-busy="true">
        <div class="meta">writing… <span class="muted">(${U.deltas} pieces so far)</span></div>
        <div class="body">${U.text}</div>
      </li>`)}
    </ol>
    ${d?null:a`<${S} what="the session" />`}
    <${At} ready=${d} label="Message" onSend=${A} />
  </div>`}function is({m:e}){return a`<li class=${"msg "+e.type} data-message-id=${e.id} data-type=${e.type}>
    <div class="meta"><strong>${e.sentBy.handle}</strong> · <time datetime=${e.timestamp}>${b(e.timestamp)}</time>${e.type==="error"?" \xB7 no answer":""}</div>
    <div class="body">${e.text}</div>
    ${e.embeds.length?a`<ul class="embeds">${e.embeds.map(t=>a`<li><${ls} e=${t} /></li>`)}</ul>`:null}
  </li>`}function ls({e}){let t=e.uri.startsWith("data:");try{t=t||new URL(e.uri,location.href).origin===location.origin}catch{t=!1}return e.contentType.startsWith("image/")&&t?a`<figure><img src=${e.uri} alt=${"embed #"+e.key} /><figcaption>#${e.key} · ${e.contentType}</figcaption></figure>`:a`<a href=${e.uri} target="_blank" rel="noopener noreferrer">#${e.key} (${e.contentType})</a>`}function At({ready:e,label:t,onSend:s}){let[n,r]=g(""),[o,i]=g(!1);return a`<form class="composer" onSubmit=${async c=>{c.preventDefault();let p=n.trim();if(!p)return;i(!0);let d=await s(p);i(!1),d!==!1&&r("")}}>
    <label for="chat-input">${t}</label>
    <div class="row">
      <input id="chat-input" autocomplete="off" value=${n} onInput=${c=>r(c.target.value)} placeholder="What is 12 times 7?" />
      <button type="submit" disabled=${!e||o}>${o?"Sending\u2026":"Send"}</button>
    </div>
  </form>`}function Nt({args:e}){let t=e[0]||"";return t?a`<${ds} key=${t} handle=${t} />`:a`<${cs} />`}function cs(){let{key:e}=x(),t=C(()=>j(e,`{ allSessions(first: 100) { ${we} } }`),[e]);return a`<${D} title="Timeline">
    <p>Pick a session to see every event of it in the log, live while it runs.</p>
    <${v} error=${t.error} />
    ${t.loading?a`<${S} what="sessions" />`:null}
    <ul class="sessions">${(t.data&&t.data.allSessions||[]).map(s=>a`<li>
      <a class="session-title" href=${"#/timeline/"+s.handle}>${xe(s)}</a> <span class="muted">${b(s.created)} · <code class="id">${s.handle}</code></span></li>`)}</ul>
  <//>`}function ds({handle:e}){let{subs:t}=x(),[s,n]=g([]),[r,o]=g(null),[i,l]=g(-1);R(()=>t.subscribe("subscription($h: String!) { sessionEvents(handle: $h, fromSequence: 0) { sequence id type time version actor correlationId causationId data } }",{h:e},{next:m=>n(f=>f.length&&f[f.length-1].sequence>=m.sessionEvents.sequence?f:[...f,m.sessionEvents]),error:o}),[e]);let c=ne(()=>us(s),[s]),p=s.length-1,d=i<0||i>p?p:i,$=i<0,h=s.slice(0,d+1),u=s.length?Date.parse(s[0].time):0,y=s.length?s[d].sequence:0,_=G(null);return R(()=>{!$&&_.current&&_.current.scrollIntoView({block:"nearest"})},[d,$]),a`<${D} title=${`Timeline \xB7 ${e}`}>
    <p class="muted"><a href=${"#/chat/"+e}>Chat of this session</a> · ${s.length} events${$?" \xB7 following live":""}</p>
    <${v} error=${r} />
    ${!s.length&&!r?a`<${S} what="the log" />`:null}
    ${s.length?a`<div class="scrub">
      <label for="scrub">Show the log up to sequence <strong id="scrub-seq">${y}</strong> (event ${d+1} of ${s.length})</label>
      <input id="scrub" type="range" min="0" max=${p} step="1" value=${d} aria-valuetext=${`sequence ${y}, event ${d+1} of ${s.length}`}
        onInput=${m=>{let f=Number(m.target.value);l(f===p?-1:f)}} />
      <div class="row">
        <${le} id="replay-cmd" label="Replay from here in a terminal" value=${`contrail replay session ${e} --from ${y}`} />
        <button type="button" disabled=${$} onClick=${()=>l(-1)}>Follow live</button>
      </div>
    </div>`:null}
    <div class="split">
      <ol class="events" aria-label="Events">
        ${h.map((m,f)=>a`<${ps} e=${m} i=${f} start=${u} prev=${f?Date.parse(s[f-1].time):u}
          duration=${c.get(m.sequence)} current=${f===d&&!$} refEl=${f===d?_:null} onPick=${()=>l(f===p?-1:f)} />`)}
      </ol>
      <aside class="side" aria-label="The session at this sequence">
        <h2>The session at sequence ${y}</h2>
        <${hs} evs=${h} />
        ${d<p?a`<p class="muted">${p-d} later event${p-d===1?"":"s"} hidden.</p>`:null}
      </aside>
    </div>
  <//>`}function us(e){let t=new Map,s=new Map;for(let n of e){if(n.type!=="session.agent_step")continue;let r=n.data||{},o=[r.reply_id,r.path||r.agent,r.name].join("|");(r.kind==="ask_func"||r.kind==="ask_agent")&&t.set(o,Date.parse(n.time)),(r.kind==="func_says"||r.kind==="agent_says")&&t.has(o)&&(s.set(n.sequence,Date.parse(n.time)-t.get(o)),t.delete(o))}return s}function ps({e,i:t,start:s,prev:n,duration:r,current:o,refEl:i,onPick:l}){let c=Date.parse(e.time),p=e.data||{};return a`<li class=${"event"+(o?" current":"")} ref=${i} data-type=${e.type} data-kind=${p.kind||void 0} data-sequence=${e.sequence}>
    <div class="ev-head">
      <button type="button" class="seq" onClick=${l} aria-label=${`Scrub to sequence ${e.sequence}`}>#${e.sequence}</button>
      <span class="offset" title=${b(e.time)}>${be(c-s)}</span>
      ${t?a`<span class="muted">(${be(c-n)} after the previous)</span>`:null}
      <span class="type">${e.type}</span>
    </div>
    <div class="ev-body"><${$s} e=${e} duration=${r} /></div>
    <details><summary>All fields</summary><${M} data=${{...p,_event_id:e.id,_version:e.version,_actor:e.actor,_correlation:e.correlationId,_causation:e.causationId}} /></details>
  </li>`}var z=e=>e.path||e.agent||"";function $s({e,duration:t}){let s=e.data||{},n=t!==void 0?a` <span class="badge">took ${be(t).slice(1)}</span>`:null,r=s.call?a` <span class="badge" title="the model call that produced this step">model call ${s.call}</span>`:null;switch(e.type){case"session.created":return a`<p>Session opened; front agent <code>${s.frontend_agent_handle||s.frontend_agent_id}</code>.</p>`;case"session.message_posted":return a`<p><strong>${s.sent_by}</strong> asks: ${s.text}</p>${It(s.embeds)}`;case"session.query_dispatched":return a`<p>Query <code>${s.message_id}</code> handed to agent <code>${s.agent_handle||s.agent_id}</code>; its reply will be <code>${s.reply_id}</code>.</p>`;case"session.routed":return a`<div>
        <p>${s.path?a`<code>${s.path}</code> `:null}routed “${s.query}” → ${s.chosen?a`<strong>${s.chosen}</strong>`:a`<em>no agent fits</em> (the front agent answers)`}</p>
        <table class="scores"><caption class="sr-only">Candidates and their scores</caption>
          <thead><tr><th scope="col">Candidate</th><th scope="col">Score</th></tr></thead>
          <tbody>${(s.matches||[]).map(o=>a`<tr class=${o.handle===s.chosen?"chosen":""}><td>${o.handle}${o.handle===s.chosen?" (chosen)":""}</td><td><${ke} score=${o.score} fits=${o.handle===s.chosen} /></td></tr>`)}</tbody>
        </table></div>`;case"session.agent_step":switch(s.kind){case"thought":return a`<p class="step thought"><code>${z(s)}</code> thinks: ${s.text}${r}</p>`;case"ask_func":return a`<p class="step"><code>${z(s)}</code> calls func <strong>${s.name}</strong> with <code class="args">${s.text}</code>${r}</p>`;case"func_says":return a`<p class="step"><code>${z(s)}</code> ← func <strong>${s.name}</strong> says: <code class="args">${s.text}</code>${n}</p>`;case"ask_agent":return a`<p class="step"><code>${z(s)}</code> asks agent <strong>${s.name}</strong>: ${s.text}${r}</p>`;case"agent_says":return a`<p class="step"><code>${z(s)}</code> ← agent <strong>${s.name}</strong> says: ${s.text}${n}</p>`;case"answer":return a`<p class="step answer"><code>${z(s)}</code> answers: ${s.text}${r}</p>`;case"failed":return a`<p class="step failed"><code>${z(s)}</code> failed: ${s.text}</p>`}return a`<p class="step"><code>${z(s)}</code> ${s.kind}${s.name?` [${s.name}]`:""}: ${s.text}${r}</p>`;case"session.reply_posted":return a`<p><strong>${s.sent_by}</strong> replies: ${s.text}</p>${It(s.embeds)}`;case"session.reply_failed":return a`<p class="failed">No reply from <strong>${s.sent_by}</strong>: ${s.error}</p>`;case"session.deleted":return a`<p>Session deleted.</p>`}return a`<${M} data=${s} />`}function It(e){let t=Object.keys(e||{});return t.length?a`<p class="muted">Embeds: ${t.map(s=>a`<code>#${s}</code> (${e[s].content_type}) `)}</p>`:null}function hs({evs:e}){let t=[],s="";for(let n of e){let r=n.data||{};n.type==="session.message_posted"&&t.push({id:r.message_id,who:r.sent_by,text:r.text,cls:"query"}),n.type==="session.reply_posted"&&t.push({id:r.message_id,who:r.sent_by,text:r.text,cls:"response"}),n.type==="session.reply_failed"&&t.push({id:r.message_id,who:r.sent_by,text:r.error,cls:"error"}),n.type==="session.query_dispatched"&&(s=r.agent_handle||r.agent_id),(n.type==="session.reply_posted"||n.type==="session.reply_failed")&&(s="")}return a`<ol class="messages compact">
    ${t.map(n=>a`<li class=${"msg "+n.cls}><div class="meta"><strong>${n.who}</strong></div><div class="body">${n.text}</div></li>`)}
    ${s?a`<li class="msg response muted">${s} is working on a reply…</li>`:null}
    ${t.length?null:a`<li class="muted">No messages yet.</li>`}
  </ol>`}function Pt(){let e=`${location.origin}/mcp`,t=JSON.stringify({mcpServers:{contrail:{type:"http",url:e,headers:{Authorization:"Bearer <your Contrail API key>"}}}},null,2);return a`<section class="card" aria-labelledby="mcp-h">
    <h2 id="mcp-h">Connect a desktop client (MCP)</h2>
    <p>Your agents (<code>ask_&lt;handle&gt;</code>), Julep tasks and vector store searches are MCP tools at <code id="mcp-url">${e}</code>. Add this to your client's MCP configuration:</p>
    <pre class="text" id="mcp-config">${t}</pre>
  </section>`}var Rt="agentId handle name description kind published queries queryUrl funcUrl moreInfoUrl model created modified owner { username }";function Dt({args:e}){let t=e[0]||"",{key:s}=x(),n=C(()=>j(s,`{ allAgents(first: 1000) { ${Rt} } }`),[s]),[r,o]=g("");return a`<${D} title=${t?`Agent \xB7 ${t}`:"Agents"}>
    <div class="split">
      <div class="main-col">
        ${t?a`<${gs} key=${t} handle=${t} onTry=${o} onChanged=${n.reload} />`:a`<${_s} list=${n} />`}
      </div>
      <aside class="side">
        <${ys} query=${r} setQuery=${o} />
        <${bs} onDone=${n.reload} />
        <${Pt} />
      </aside>
    </div>
  <//>`}function _s({list:e}){return e.error?a`<${v} error=${e.error} />`:e.data?a`<table class="grid">
    <caption>Agents you may use: built-ins, yours, and published ones</caption>
    <thead><tr><th scope="col">Handle</th><th scope="col">Kind</th><th scope="col">Owner</th><th scope="col">Sample queries</th><th scope="col">Description</th></tr></thead>
    <tbody>${e.data.allAgents.map(t=>a`<tr>
      <td><a href=${"#/agents/"+t.handle}>${t.handle}</a>${t.published?a` <span class="badge">published</span>`:null}</td>
      <td>${t.kind}</td><td>${t.owner?t.owner.username:a`<span class="muted">built-in</span>`}</td>
      <td>${t.queries.length||(t.owner?a`<span class="warn" title="The router never picks an agent without sample queries; ask it by handle">0 · not routed to</span>`:"0")}</td><td>${t.description||t.name||""}</td></tr>`)}</tbody>
  </table>`:a`<${S} what="agents" />`}var ms=e=>[...new Set((e||[]).flatMap(t=>[...t.matchAll(/Ask Func\[([^\]]+)\]/g)].map(s=>s[1])))];function fs(e){let t=/^(Q|Thought|Ask Func\[[^\]]*\]|Func\[[^\]]*\] says|Ask Agent\[[^\]]*\]|Agent\[[^\]]*\] says|A):/.exec(e);return t?t[1]==="Q"?"l-q":t[1]==="A"?"l-a":t[1]==="Thought"?"l-thought":t[1].endsWith("says")?"l-says":"l-ask":""}function gs({handle:e,onTry:t,onChanged:s}){let{key:n,me:r}=x(),o=C(()=>j(n,`query($h: String!) { agentByHandle(handle: $h) { ${Rt} basePrompt fewShots } }`,{h:e}),[n,e]),i=F(async()=>(await j(n,"mutation($h: String!) { refreshAgent(handle: $h) { agent { handle } } }",{h:e}),o.reload(),s(),"Read its description again.")),l=F(async()=>{await j(n,"mutation($h: String!) { deleteAgent(handle: $h) { agent { handle } } }",{h:e}),s(),location.hash="#/agents"});if(o.error)return a`<${v} error=${o.error} />`;if(!o.data)return a`<${S} what=${e} />`;let c=o.data.agentByHandle;if(!c)return a`<p role="alert" class="error">No agent ${e} that your key may use. <a href="#/agents">All agents</a></p>`;let p=c.owner&&c.owner.username===r.username,d=ms(c.fewShots);return a`<article class="agent">
    <p><a href="#/agents">← All agents</a></p>
    <h2>${c.name||c.handle} <span class="badge">${c.kind}</span>${c.published?a` <span class="badge">published</span>`:null}</h2>
    ${c.description?a`<p>${c.description}</p>`:null}
    <dl class="kv">
      <div><dt>Handle</dt><dd><code>${c.handle}</code> (<code>${c.agentId}</code>)</dd></div>
      <div><dt>Owner</dt><dd>${c.owner?c.owner.username:"built-in"}</dd></div>
      ${c.funcUrl?a`<div><dt>Funcs URL</dt><dd><code>${c.funcUrl}</code></dd></div>`:null}
      ${c.queryUrl?a`<div><dt>Query URL</dt><dd><code>${c.queryUrl}</code></dd></div>`:null}
      <div><dt>Model</dt><dd>${c.model||a`<span class="muted">the platform's default</span>`}</dd></div>
      <div><dt>Modified</dt><dd>${b(c.modified)}</dd></div>
    </dl>
    ${p?a`<div class="row">
      <button type="button" onClick=${()=>i.run()} disabled=${i.busy}>Refresh from its URL</button>
      <${Ge} label="Delete agent" confirm=${`Really delete ${c.handle}?`} onConfirm=${()=>l.run()} busy=${l.busy} />
      <span aria-live="polite" class="muted">${i.done||""}</span>
    </div><${v} error=${i.error||l.error} />`:null}
    <h3>Sample queries</h3>
    ${c.queries.length?a`<ul class="queries">${c.queries.map($=>a`<li>${$} <button type="button" class="small" onClick=${()=>t($)}>Try routing</button></li>`)}</ul>`:a`<p class="muted">None: the router never picks this agent.</p>`}
    <h3>Funcs</h3>
    ${d.length?a`<ul>${d.map($=>a`<li><code>${$}</code></li>`)}</ul>`:a`<p class="muted">Its few-shots call no func.</p>`}
    <h3>Base prompt</h3>
    ${c.basePrompt?a`<pre class="text">${c.basePrompt}</pre>`:a`<p class="muted">None.</p>`}
    <h3>Few-shots</h3>
    ${(c.fewShots||[]).length?(c.fewShots||[]).map(($,h)=>a`<figure class="fewshot"><figcaption>Example ${h+1}</figcaption>
      <pre>${$.split(`
`).map(u=>a`<span class=${fs(u)}>${u}</span>${`
`}`)}</pre></figure>`):a`<p class="muted">None.</p>`}
  </article>`}function Ge({label:e,confirm:t,onConfirm:s,busy:n}){let[r,o]=g(!1);return r?a`<span class="confirm" role="group" aria-label=${t}>${t}
    <button type="button" class="danger" autofocus onClick=${()=>{o(!1),s()}}>Yes</button>
    <button type="button" onClick=${()=>o(!1)}>No</button></span>`:a`<button type="button" class="danger" onClick=${()=>o(!0)} disabled=${n}>${e}</button>`}function ys({query:e,setQuery:t}){let{key:s}=x(),n=F(async o=>(await j(s,"query($q: String!) { route(query: $q, first: 5) { agent { handle } score fits } }",{q:o})).route);return a`<section class="card" aria-labelledby="route-h">
    <h2 id="route-h">Try routing</h2>
    <form class="stack" onSubmit=${o=>{o.preventDefault(),e.trim()&&n.run(e.trim())}}>
      <label for="route-q">A question</label>
      <input id="route-q" value=${e} onInput=${o=>t(o.target.value)} placeholder="Generate a random number between 1 and 10" />
      <button type="submit" disabled=${n.busy}>Route</button>
    </form>
    <${v} error=${n.error} />
    ${n.done?a`<table class="scores" id="route-result"><caption>What the router would pick, best first</caption>
      <thead><tr><th scope="col">Agent</th><th scope="col">Score</th></tr></thead>
      <tbody>${n.done.map(o=>a`<tr data-agent=${o.agent.handle}><td><a href=${"#/agents/"+o.agent.handle}>${o.agent.handle}</a></td><td><${ke} score=${o.score} fits=${o.fits} /></td></tr>`)}</tbody>
      </table>${n.done.length?null:a`<p class="muted">No agent has sample queries to compare with.</p>`}`:null}
  </section>`}var vs="[a-z0-9][a-z0-9_\\-]*";function bs({onDone:e}){let{key:t}=x(),[s,n]=g({handle:"",url:"",kind:"codeshot",published:!1}),r=l=>c=>n({...s,[l]:c.target.type==="checkbox"?c.target.checked:c.target.value}),o=F(async()=>{let l={handle:s.handle.trim(),published:s.published};s.kind==="standalone"?l.queryUrl=s.url.trim():l.funcUrl=s.url.trim();let c=await Be(t,"mutation($d: AgentInput!) { createAgent(agentData: $d) { agent { handle kind queries } } }",{d:l});return e(),{...c.data.createAgent.agent,warnings:c.extensions.warnings||[]}}),i=o.done;return a`<section class="card" aria-labelledby="reg-h">
    <h2 id="reg-h">Register an agent by URL</h2>
    <form class="stack" onSubmit=${l=>{l.preventDefault(),o.run()}}>
      <label for="reg-handle">Handle</label>
      <input id="reg-handle" required pattern=${vs} title="lower-case letters, digits, - and _" value=${s.handle} onInput=${r("handle")} />
      <label for="reg-url">URL</label>
      <input id="reg-url" type="url" required value=${s.url} onInput=${r("url")} placeholder="http://127.0.0.1:8181/" />
      <fieldset><legend>What answers at the URL</legend>
        <label><input type="radio" name="reg-kind" value="codeshot" checked=${s.kind==="codeshot"} onChange=${r("kind")} /> A Code Shot agent: its description at GET /, its funcs</label>
        <label><input type="radio" name="reg-kind" value="standalone" checked=${s.kind==="standalone"} onChange=${r("kind")} /> A standalone agent: it answers queries itself</label>
      </fieldset>
      <label><input type="checkbox" checked=${s.published} onChange=${r("published")} /> Published (every account may use it)</label>
      <button type="submit" disabled=${o.busy}>${o.busy?"Reading its description\u2026":"Register"}</button>
    </form>
    <${v} error=${o.error} />
    ${i?a`<div role="status" id="reg-done">
      <p>Registered <a href=${"#/agents/"+i.handle}>${i.handle}</a> (${i.kind}, ${i.queries.length} sample ${i.queries.length===1?"query":"queries"}).</p>
      ${i.warnings.map(l=>a`<p class="warning">${l}</p>`)}
      ${i.queries.length?null:a`<p class="warning" id="reg-unroutable">The router never picks an agent without sample queries:
        ${i.warnings.length?" once its URL answers, use Refresh on its page to read its description.":" ask it by handle, or give it some in its description at GET / and use Refresh on its page."}</p>`}
    </div>`:null}
  </section>`}function Mt({args:e}){let{key:t}=x(),s=e[0]==="thread"?e[1]:"",n=C(async()=>{let[o,i]=await Promise.all([k(t,"GET","/v1/assistants?limit=100"),k(t,"GET","/v1/threads?limit=100")]);return{assistants:o.data,threads:i.data}},[t]),r=o=>(n.data&&n.data.assistants.find(i=>i.id===o)||{}).name||o;return a`<${D} title=${s?`Thread \xB7 ${s}`:"Assistants"}>
    <${v} error=${n.error} />
    <div class="split">
      <aside class="side" aria-label="Assistants and threads">
        <h2>Assistants</h2>
        ${n.data?a`<ul class="plain">${n.data.assistants.map(o=>a`<li><strong>${o.name||o.id}</strong> <span class="muted">${o.model}</span>
          <details><summary>Details</summary><${M} data=${{id:o.id,instructions:o.instructions,tools:o.tools.map(i=>i.type),created:b(o.created_at)}} /></details></li>`)}
          ${n.data.assistants.length?null:a`<li class="muted">None yet: create one with any OpenAI SDK pointed at /v1.</li>`}</ul>`:a`<${S} />`}
        <h2>Threads</h2>
        ${n.data?a`<ul class="sessions">${n.data.threads.map(o=>a`<li class=${o.id===s?"current":""}>
          <a href=${"#/assistants/thread/"+o.id} aria-current=${o.id===s?"page":void 0}>${o.id}</a> <span class="muted">${b(o.created_at)}</span></li>`)}
          ${n.data.threads.length?null:a`<li class="muted">No threads yet.</li>`}</ul>`:null}
      </aside>
      <div class="main-col">
        ${s?a`<${ks} key=${s} id=${s} name=${r} />`:a`<p>Pick a thread to see its messages and runs.</p>`}
      </div>
    </div>
  <//>`}function ks({id:e,name:t}){let{key:s}=x(),n=C(async()=>{let r="/v1/threads/"+encodeURIComponent(e),[o,i]=await Promise.all([k(s,"GET",r+"/messages?order=asc&limit=100"),k(s,"GET",r+"/runs?order=asc&limit=100")]);return{messages:o.data,runs:i.data}},[s,e]);return n.error?a`<${v} error=${n.error} />`:n.data?a`<div>
    <p class="row"><button type="button" onClick=${n.reload}>Refresh</button></p>
    <h2>Messages</h2>
    <ol class="messages">${n.data.messages.map(r=>a`<li class=${"msg "+(r.role==="user"?"query":"response")}>
      <div class="meta"><strong>${r.role==="assistant"?t(r.assistant_id):r.role}</strong> · ${b(r.created_at)} · ${r.status}${r.run_id?a` · run <code>${r.run_id}</code>`:null}</div>
      <div class="body">${r.content.map(o=>o.type==="text"?o.text.value:a`<${M} data=${o} />`)}</div></li>`)}
      ${n.data.messages.length?null:a`<li class="muted">No messages.</li>`}</ol>
    <h2>Runs</h2>
    ${n.data.runs.map(r=>a`<${xs} key=${r.id} run=${r} thread=${e} name=${t} />`)}
    ${n.data.runs.length?null:a`<p class="muted">No runs.</p>`}
  </div>`:a`<${S} what="the thread" />`}function ws(e){let t=[["queued",e.created_at]];return e.started_at&&t.push(["in_progress",e.started_at]),e.status==="requires_action"&&t.push(["requires_action",null]),e.status==="cancelling"&&t.push(["cancelling",null]),e.cancelled_at&&t.push(["cancelled",e.cancelled_at]),e.failed_at&&t.push(["failed",e.failed_at]),e.completed_at&&t.push(["completed",e.completed_at]),e.status==="expired"&&t.push(["expired",e.expires_at]),e.status==="incomplete"&&t.push(["incomplete",e.completed_at]),t}function xs({run:e,thread:t,name:s}){let{key:n}=x(),[r,o]=g(!1),i=C(()=>r?k(n,"GET",`/v1/threads/${encodeURIComponent(t)}/runs/${encodeURIComponent(e.id)}/steps?order=asc&limit=100`):Promise.resolve(null),[n,t,e.id,r]);return a`<article class="card run">
    <h3><code>${e.id}</code> <span class=${"badge status-"+e.status}>${e.status}</span></h3>
    <p class="muted">${s(e.assistant_id)} · model ${e.model}${e.usage?` \xB7 ${e.usage.total_tokens} tokens`:""}</p>
    ${e.last_error?a`<p class="error">${e.last_error.code}: ${e.last_error.message}</p>`:null}
    <h4>Status history</h4>
    <ol class="history">${ws(e).map(([l,c])=>a`<li><span class=${"badge status-"+l}>${l}</span> ${c?b(c):a`<span class="muted">now</span>`}</li>`)}</ol>
    <button type="button" aria-expanded=${r} onClick=${()=>o(!r)}>${r?"Hide steps":"Show steps"}</button>
    ${r&&i.error?a`<${v} error=${i.error} />`:null}
    ${r&&i.data?a`<ol class="steps">${i.data.data.map(l=>a`<li>
      <strong>${l.type==="tool_calls"?"Tool calls":"Message"}</strong> <span class=${"badge status-"+l.status}>${l.status}</span>
      <span class="muted">${b(l.created_at)}${l.completed_at?` \u2192 ${b(l.completed_at)}`:""}</span>
      <${Ss} d=${l.step_details} />
      ${l.last_error?a`<p class="error">${l.last_error.message}</p>`:null}
    </li>`)}${i.data.data.length?null:a`<li class="muted">No steps.</li>`}</ol>`:null}
  </article>`}function Ss({d:e}){return e?e.type==="message_creation"?a`<p class="muted">wrote message <code>${e.message_creation.message_id}</code></p>`:e.type==="tool_calls"?a`<ul>${e.tool_calls.map(t=>a`<li>${t.type==="function"?a`<code>${t.function.name}(${t.function.arguments})</code> → ${t.function.output===null||t.function.output===void 0?a`<span class="muted">waiting for its output</span>`:a`<code>${t.function.output}</code>`}`:a`<${M} data=${t} />`}</li>`)}</ul>`:a`<${M} data=${e} />`:null}var Ut=20;function Ot({args:e}){let[t,s]=e,n=t==="conversation"?s:"",r=t==="response"?s:"",o=n?`Conversation \xB7 ${n}`:r?`Response \xB7 ${r}`:"Responses";return a`<${D} title=${o}>
    <div class="split">
      <aside class="side" aria-label="Conversations">
        <${Cs} current=${r} />
        <${Ts} current=${n} />
      </aside>
      <div class="main-col">
        ${n?a`<${Es} key=${n} id=${n} />`:r?a`<${As} key=${r} id=${r} />`:a`<p>Pick a conversation to see its items, or open a response by its ID. Conversations are made with
            <code>POST /v1/conversations</code> (any OpenAI SDK pointed at /v1, or the Agents SDK's
            <code>OpenAIConversationsSession</code>); a response names one with <code>conversation</code>.</p>`}
      </div>
    </div>
  <//>`}function Cs({current:e}){let[t,s]=g(e||"");return a`<form class="stack" onSubmit=${r=>{r.preventDefault();let o=t.trim();o&&(location.hash="#/responses/response/"+encodeURIComponent(o))}}>
    <label for="response-id">Open a response by its ID</label>
    <div class="row"><input id="response-id" placeholder="resp_…" autocomplete="off" spellcheck="false" required value=${t}
      onInput=${r=>s(r.target.value)} /><button type="submit">Open</button></div>
  </form>`}function Ts({current:e}){let{key:t}=x(),[s,n]=g([]),[r,o]=g({busy:!1,error:null}),i=C(async()=>{let $=await k(t,"GET",`/v1/conversations?limit=${Ut}`);return n([]),$},[t]),l=i.data?[i.data,...s]:[],c=l[l.length-1],p=async()=>{o({busy:!0,error:null});try{let $=await k(t,"GET",`/v1/conversations?limit=${Ut}&after=${encodeURIComponent(c.last_id)}`);n(h=>[...h,$]),o({busy:!1,error:null})}catch($){o({busy:!1,error:$})}},d=l.flatMap($=>$.data);return a`<h2>Conversations</h2>
    <${v} error=${i.error} />
    ${i.data?a`<ul class="sessions" id="conversations">${d.map($=>a`<li class=${$.id===e?"current":""} data-id=${$.id}>
      <a class="session-title" href=${"#/responses/conversation/"+$.id} aria-current=${$.id===e?"page":void 0}>${$.preview||"No user message"}</a>
      <code class="id">${$.id}</code> <span class="muted">${b($.created_at)}</span></li>`)}
      ${d.length?null:a`<li class="muted">No conversations yet.</li>`}</ul>
      ${c&&c.has_more?a`<p class="row"><button type="button" disabled=${r.busy} onClick=${p}>${r.busy?"Loading\u2026":"More conversations"}</button></p>`:null}
      <${v} error=${r.error} />
      <p class="row"><button type="button" onClick=${i.reload}>Refresh list</button></p>`:a`<${S} what="conversations" />`}`}async function Lt(e,t){let s=[],n="";for(let r=0;r<10;r++){let o=await k(e,"GET",t+(n?"&after="+encodeURIComponent(n):""));if(s.push(...o.data),!o.has_more||!o.last_id)break;n=o.last_id}return s}var qs="&include[]=code_interpreter_call.outputs&include[]=file_search_call.results";function Es({id:e}){let{key:t}=x(),s=C(async()=>{let o="/v1/conversations/"+encodeURIComponent(e),[i,l]=await Promise.all([k(t,"GET",o),Lt(t,o+"/items?order=asc&limit=100"+qs)]);return{conv:i,items:l}},[t,e]);if(s.error)return a`<${v} error=${s.error} />`;if(!s.data)return a`<${S} what="the conversation" />`;let{conv:n,items:r}=s.data;return a`<div>
    <p class="row"><button type="button" onClick=${s.reload}>Refresh</button></p>
    <${M} data=${{id:n.id,created:b(n.created_at),metadata:Object.keys(n.metadata||{}).length?n.metadata:null}} />
    <h2>Items</h2>
    <${Ve} items=${r} empty="No items." />
  </div>`}function As({id:e}){let{key:t}=x(),[s,n]=g(!1),r=C(()=>k(t,"GET","/v1/responses/"+encodeURIComponent(e)),[t,e]),o=C(()=>s?Lt(t,`/v1/responses/${encodeURIComponent(e)}/input_items?order=asc&limit=100`):Promise.resolve(null),[t,e,s]);if(r.error)return a`<${v} error=${r.error} />`;if(!r.data)return a`<${S} what="the response" />`;let i=r.data,l=i.conversation&&i.conversation.id;return a`<article class="card" id="response">
    <h2><code class="id">${i.id}</code> <span class=${"badge status-"+i.status} id="response-status">${i.status}</span></h2>
    <p class="row"><button type="button" onClick=${r.reload}>Refresh</button></p>
    <${M} data=${{model:i.model,created:b(i.created_at),...i.background?{background:"yes"}:{}}} />
    ${l?a`<p>In conversation <a href=${"#/responses/conversation/"+l}><code class="id">${l}</code></a></p>`:null}
    ${i.previous_response_id?a`<p>After response <a href=${"#/responses/response/"+i.previous_response_id}><code class="id">${i.previous_response_id}</code></a></p>`:null}
    ${i.error?a`<p class="error">${i.error.code}: ${i.error.message}</p>`:null}
    ${i.incomplete_details?a`<p class="warning">Incomplete: ${i.incomplete_details.reason}</p>`:null}
    ${i.instructions?a`<details><summary>Instructions</summary><pre>${typeof i.instructions=="string"?i.instructions:JSON.stringify(i.instructions,null,2)}</pre></details>`:null}
    <h3>Output</h3>
    <${Ve} items=${i.output||[]} empty="No output." />
    <h3>Usage</h3>
    <div id="response-usage">${i.usage?a`<${M} data=${{input_tokens:i.usage.input_tokens,output_tokens:i.usage.output_tokens,total_tokens:i.usage.total_tokens,cached_tokens:i.usage.input_tokens_details&&i.usage.input_tokens_details.cached_tokens,reasoning_tokens:i.usage.output_tokens_details&&i.usage.output_tokens_details.reasoning_tokens}} />`:a`<span class="muted">not yet known</span>`}</div>
    <button type="button" aria-expanded=${s} onClick=${()=>n(!s)}>${s?"Hide input items":"Show input items"}</button>
    ${s&&o.error?a`<${v} error=${o.error} />`:null}
    ${s&&o.data?a`<${Ve} items=${o.data} empty="No input items." />`:null}
  </article>`}function Ve({items:e,empty:t}){let s={};for(let n of e)n.type==="function_call"&&(s[n.call_id]=n.name);return a`<ol class="messages compact items">${e.map(n=>a`<${Ns} key=${n.id} it=${n} calls=${s} />`)}
    ${e.length?null:a`<li class="muted">${t}</li>`}</ol>`}var Je=e=>{switch(e.type){case"input_text":case"output_text":case"text":case"summary_text":return e.text;case"refusal":return`[refused: ${e.refusal}]`;case"input_image":return`[image${e.file_id?" "+e.file_id:""}]`;case"input_file":return`[file ${e.filename||e.file_id||""}]`}return`[${e.type}]`},Is=e=>typeof e=="string"?e:Array.isArray(e)?e.map(Je).join(`
`):JSON.stringify(e);function Ns({it:e,calls:t}){let s=(r,o)=>a`<div class="meta"><strong>${r}</strong>${o?a` · ${o}`:null}${e.status&&e.status!=="completed"?a` · <span class=${"badge status-"+e.status}>${e.status}</span>`:null}</div>`,n=(r,o)=>a`<li class=${"msg "+r} data-type=${e.type} data-id=${e.id}>${o}</li>`;switch(e.type){case"message":return n(e.role==="assistant"?"response":"query",a`${s(e.role)}<div class="body">${(e.content||[]).map(Je).join(`
`)}</div>`);case"function_call":return n("tool",a`${s("Function call",a`<code>${e.call_id}</code>`)}<code class="args">${e.name}(${e.arguments})</code>`);case"function_call_output":return n("tool",a`${s("Function output",a`${t[e.call_id]?a`of <code>${t[e.call_id]}</code> `:null}<code>${e.call_id}</code>`)}<pre class="text">${Is(e.output)}</pre>`);case"file_search_call":return n("tool",a`${s("File search")}<p>${(e.queries||[]).map(r=>`\u201C${r}\u201D`).join(", ")||a`<span class="muted">no queries</span>`}</p>
        ${e.results?a`<p class="muted">${e.results.length} results${e.results.length?": "+[...new Set(e.results.map(r=>r.filename||r.file_id))].join(", "):""}</p>`:null}`);case"code_interpreter_call":return n("tool",a`${s("Code interpreter",e.container_id?a`<code>${e.container_id}</code>`:null)}<pre>${e.code}</pre>
        ${(e.outputs||[]).map(r=>r.type==="logs"?a`<pre class="text">${r.logs}</pre>`:a`<p class="muted">image output</p>`)}`);case"mcp_list_tools":return n("tool",a`${s("MCP tools",e.server_label)}<p>${(e.tools||[]).map(r=>r.name).join(", ")||a`<span class="muted">none</span>`}</p>
        ${e.error?a`<p class="error">${e.error}</p>`:null}`);case"mcp_call":return n("tool",a`${s("MCP call",e.server_label)}<code class="args">${e.name}(${e.arguments})</code>
        ${e.error?a`<p class="error">${e.error}</p>`:e.output!==null&&e.output!==void 0?a`<pre class="text">${e.output}</pre>`:null}`);case"mcp_approval_request":return n("tool",a`${s("MCP approval asked",e.server_label)}<code class="args">${e.name}(${e.arguments})</code>`);case"mcp_approval_response":return n("tool",a`${s("MCP approval",e.approve?"approved":"denied")}<p class="muted">for <code>${e.approval_request_id}</code>${e.reason?` \xB7 ${e.reason}`:""}</p>`);case"reasoning":return n("tool",a`${s("Reasoning")}<div class="body">${(e.summary||[]).map(Je).join(`
`)}</div>`);case"compaction":return n("tool",a`${s("Compacted history")}<p class="muted">the earlier items, summarised (sealed)</p>`)}return n("tool",a`${s(e.type)}<${H} v=${e} />`)}function Bt({args:e}){let{me:t}=x(),s=e[0]==="account"?e[1]:"";return t.admin?a`<${D} title="Operations">
    <div class="grid2">
      <${Ps} />
      <${Rs} />
    </div>
    <${Ds} selected=${s} />
    ${s?a`<${jt} key=${s} account=${s} own=${s===t.account_id} />`:null}
    <${Ms} />
  <//>`:a`<${D} title="Operations">
      <p>Operations (accounts, usage, projections, the dead-letter queue) need an admin key. You are signed
        in as <strong>${t.username}</strong> (account <code>${t.account_id}</code>). Your own keys:</p>
      <${jt} account=${t.account_id} own=${!0} />
    <//>`}function Ps(){let e=C(ye,[]);return a`<section class="card" aria-labelledby="health-h">
    <h2 id="health-h">Node health</h2>
    ${e.data?a`<p id="node-ready" class=${e.data.ready?"ok":"error"}>${e.data.ready?"Ready":"Not ready"}${e.data.status.reason?`: ${e.data.status.reason}`:""}</p>`:a`<${S} />`}
    ${e.data&&e.data.status.code_interpreter?a`<p id="code-interpreter" class=${e.data.status.code_interpreter.available?"ok":"warning"}>
      code_interpreter: ${e.data.status.code_interpreter.available?"available":`unavailable: ${e.data.status.code_interpreter.reason||"no reason given"}`}</p>`:null}
    <${v} error=${e.error} />
    <button type="button" onClick=${e.reload}>Check again</button>
  </section>`}function Rs(){let{key:e}=x(),t=C(()=>k(e,"GET","/admin/projections"),[e]);return a`<section class="card" aria-labelledby="proj-h">
    <h2 id="proj-h">Projections</h2>
    <${v} error=${t.error} />
    ${t.data?a`<table class="grid" id="projections"><caption class="sr-only">Read models and how far behind the log they are</caption>
      <thead><tr><th scope="col">Read model</th><th scope="col">Applied up to</th><th scope="col">Lag (events)</th><th scope="col">Generation</th><th scope="col">Leader</th></tr></thead>
      <tbody>${t.data.projections.map(s=>a`<tr><td>${s.name}</td><td>${s.applied_sequence}</td>
        <td class=${s.pending?"warn":"ok"}>${s.pending}</td><td>${s.generation}</td><td>${s.leader||a`<span class="muted">none</span>`}</td></tr>`)}</tbody>
    </table>`:a`<${S} />`}
    <button type="button" onClick=${t.reload}>Refresh</button>
  </section>`}function Ds({selected:e}){let{key:t}=x(),s=C(async()=>{let[i,l]=await Promise.all([k(t,"GET","/admin/accounts"),k(t,"GET","/admin/usage")]),c=new Map(l.accounts.map(p=>[p.account_id,p]));return{day:l.day,accounts:i.accounts.map(p=>({...p,usage:c.get(p.id)}))}},[t]),[n,r]=g({name:"",limit:""}),o=F(async()=>{let i={name:n.name.trim()};n.limit&&(i.daily_query_limit=Number(n.limit));let l=await k(t,"POST","/admin/accounts",i);return r({name:"",limit:""}),s.reload(),l});return a`<section class="card" aria-labelledby="acct-h">
    <h2 id="acct-h">Accounts and usage${s.data?` (${s.data.day}, UTC)`:""}</h2>
    <${v} error=${s.error} />
    ${s.data?a`<table class="grid" id="accounts"><caption class="sr-only">Accounts, their daily query use against their quota, and their keys</caption>
      <thead><tr><th scope="col">Account</th><th scope="col">Queries today / quota</th><th scope="col">Requests per minute per key</th><th scope="col">Keys</th><th scope="col">Created</th></tr></thead>
      <tbody>${s.data.accounts.map(i=>{let l=i.usage||{},c=i.keys.filter(p=>!p.revoked_at).length;return a`<tr class=${i.id===e?"current":""}><td><a href=${"#/operations/account/"+i.id} aria-current=${i.id===e?"true":void 0}>${i.name}</a>${i.admin?a` <span class="badge">admin</span>`:null} <code class="muted">${i.id}</code></td>
          <td><meter min="0" max=${l.daily_query_limit||1} value=${l.daily_used_queries||0} aria-label=${`${i.name}: ${l.daily_used_queries} of ${l.daily_query_limit} queries today`}></meter> ${l.daily_used_queries} / ${l.daily_query_limit}</td>
          <td>${i.requests_per_minute||a`<span class="muted">default</span>`}</td><td>${c}${i.keys.length>c?a` <span class="muted">(+${i.keys.length-c} revoked)</span>`:null}</td><td>${b(i.created_at)}</td></tr>`})}</tbody></table>`:a`<${S} what="accounts" />`}
    <form class="inline" onSubmit=${i=>{i.preventDefault(),o.run()}}>
      <label for="new-account">New account</label>
      <input id="new-account" required value=${n.name} onInput=${i=>r({...n,name:i.target.value})} />
      <label for="new-limit">Daily query quota</label>
      <input id="new-limit" type="number" min="1" placeholder="default" value=${n.limit} onInput=${i=>r({...n,limit:i.target.value})} />
      <button type="submit" disabled=${o.busy}>Create account</button>
    </form>
    <${v} error=${o.error} />
    ${o.done?a`<div role="status"><p>Created account <code>${o.done.account_id}</code>. Its key is shown this once:</p>
      <${le} id="new-account-key" label="API key of the new account" value=${o.done.key} /></div>`:null}
  </section>`}function jt({account:e,own:t}){let{key:s,me:n}=x(),r=t?"":"?account="+encodeURIComponent(e),o=C(()=>k(s,"GET","/admin/keys"+r),[s,e]),[i,l]=g(""),c=F(async()=>{let d=await k(s,"POST","/admin/keys"+r,{name:i.trim()});return l(""),o.reload(),d}),p=F(async d=>(await k(s,"DELETE","/admin/keys/"+encodeURIComponent(d)+r),o.reload(),c.done&&c.done.key_id===d?(c.reset(),`Revoked ${d}; its value is cleared from this page.`):`Revoked ${d}.`));return a`<section class="card" aria-labelledby="keys-h">
    <h2 id="keys-h">Keys of ${t?"your account":o.data&&o.data.name?o.data.name:a`<code>${e}</code>`}</h2>
    <${v} error=${o.error} />
    ${o.data?a`<table class="grid" id="keys"><caption class="sr-only">Keys (stored as hashes: only a hint of each is known)</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
      <tbody>${o.data.keys.map(d=>a`<tr data-key-id=${d.id}><td><code>${d.id}</code> <span class="muted">${d.hint}</span></td><td>${d.name||""}</td><td>${b(d.created_at)}</td>
        <td>${d.revoked_at?a`<span class="badge">revoked ${b(d.revoked_at)}</span>`:d.id===n.key_id?a`<span class="muted">this console's key</span>`:a`<${Ge} label=${"Revoke "+d.id} confirm=${`Revoke ${d.id}? Clients using it stop working.`} onConfirm=${()=>p.run(d.id)} busy=${p.busy} />`}</td></tr>`)}</tbody>
    </table>`:a`<${S} what="keys" />`}
    <p aria-live="polite" class="muted">${p.done||""}</p>
    <${v} error=${p.error} />
    <form class="inline" onSubmit=${d=>{d.preventDefault(),c.run()}}>
      <label for="new-key">New key named</label>
      <input id="new-key" value=${i} onInput=${d=>l(d.target.value)} placeholder="laptop" />
      <button type="submit" disabled=${c.busy}>Issue key</button>
    </form>
    <${v} error=${c.error} />
    ${c.done?a`<div role="status"><${le} id="new-key-value" label=${`Key ${c.done.key_id} (shown this once)`} value=${c.done.key} /></div>`:null}
  </section>`}function Ms(){let{key:e}=x(),t=C(()=>k(e,"GET","/admin/dlq"),[e]),s=F(async n=>{let r=await k(e,"POST",`/admin/dlq/${n}/redrive`);return t.reload(),`Handed event ${r.redriven.event_seq} back to ${r.redriven.handler}.`});return a`<section class="card" aria-labelledby="dlq-h">
    <h2 id="dlq-h">Dead-letter queue</h2>
    <p class="muted">Events a handler gave up on after its retries. Re-drive one when its cause is fixed.</p>
    <${v} error=${t.error||s.error} />
    <p aria-live="polite">${s.done||""}</p>
    ${t.data?t.data.dead_letters.length?a`<table class="grid" id="dlq"><caption class="sr-only">Dead letters</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Handler</th><th scope="col">Event</th><th scope="col">Why</th><th scope="col">Deliveries</th><th scope="col">When</th><th scope="col"></th></tr></thead>
      <tbody>${t.data.dead_letters.map(n=>a`<tr><td>${n.seq}</td><td>${n.handler}</td><td>${n.event_type} <code class="muted">${n.aggregate}</code> (seq ${n.event_seq})</td>
        <td>${n.reason}</td><td>${n.deliveries}</td><td>${b(n.poisoned_at)}</td>
        <td><button type="button" onClick=${()=>s.run(n.seq)} disabled=${s.busy}>Re-drive ${n.seq}</button></td></tr>`)}</tbody>
    </table>`:a`<p id="dlq-empty">Empty: every handler kept up.</p>`:a`<${S} />`}
    <button type="button" onClick=${t.reload}>Refresh</button>
  </section>`}var ce="/julep",te=encodeURIComponent,Q=async(e,t)=>(await k(e,"GET",ce+t+(t.includes("?")?"&":"?")+"limit=100")).items||[];function Ft({args:e}){let[t,s]=e,r={agent:Os,user:Ls,task:js,execution:Bs}[t];return a`<${D} title=${r&&s?{agent:"Julep agent",user:"Julep user",task:"Julep task",execution:"Julep execution"}[t]:"Julep"}>
    <div class="split">
      <div class="main-col">
        ${r&&s?a`<p><a href="#/julep">← Julep</a></p><${r} key=${t+s} id=${s} />`:a`<${Us} />`}
      </div>
      <aside class="side">
        <section class="card" aria-labelledby="julep-about-h">
          <h2 id="julep-about-h">About</h2>
          <p>Julep's API for its SDKs at <code>/julep</code>: agents, users, docs, tasks and their executions, read
            here with your key. Create them with a Julep SDK (<code>baseURL: <span class="id">${location.origin}/julep</span></code>) or
            as the README shows.</p>
        </section>
      </aside>
    </div>
  <//>`}function Us(){let{key:e}=x(),t=C(async()=>{let[s,n]=await Promise.all([Q(e,"/agents"),Q(e,"/users")]);return{agents:s,users:n}},[e]);return t.error?a`<${v} error=${t.error} />`:t.data?a`<div>
    <h2>Agents</h2>
    ${t.data.agents.length?a`<table class="grid" id="julep-agents"><caption class="sr-only">Julep agents</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Model</th><th scope="col">About</th><th scope="col">Created</th></tr></thead>
      <tbody>${t.data.agents.map(s=>a`<tr data-id=${s.id}><td><a href=${"#/julep/agent/"+s.id}>${s.name||s.id}</a></td>
        <td>${s.model||a`<span class="muted">default</span>`}</td><td>${s.about||""}</td><td>${b(s.created_at)}</td></tr>`)}</tbody>
    </table>`:a`<p class="muted">No Julep agents yet.</p>`}
    <h2>Users</h2>
    ${t.data.users.length?a`<table class="grid" id="julep-users"><caption class="sr-only">Julep users</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">About</th><th scope="col">Created</th></tr></thead>
      <tbody>${t.data.users.map(s=>a`<tr data-id=${s.id}><td><a href=${"#/julep/user/"+s.id}>${s.name||s.id}</a></td>
        <td>${s.about||""}</td><td>${b(s.created_at)}</td></tr>`)}</tbody>
    </table>`:a`<p class="muted">No Julep users yet.</p>`}
  </div>`:a`<${S} what="Julep" />`}function Ht({docs:e}){return e.length?a`<ul class="plain docs">${e.map(t=>a`<li><strong>${t.title||t.id}</strong>
    <span class="muted">${t.modality||"text"} · ${b(t.created_at)}</span>
    <details><summary>Content</summary><${H} v=${Array.isArray(t.content)?t.content.join(`

`):t.content} /></details></li>`)}</ul>`:a`<p class="muted">No docs.</p>`}function Os({id:e}){let{key:t}=x(),s=C(async()=>{let l="/agents/"+te(e),[c,p,d,$]=await Promise.all([k(t,"GET",ce+l),Q(t,l+"/tools"),Q(t,l+"/docs"),Q(t,l+"/tasks")]);return{agent:c,tools:p,docs:d,tasks:$}},[t,e]);if(s.error)return a`<${v} error=${s.error} />`;if(!s.data)return a`<${S} what="the agent" />`;let{agent:n,tools:r,docs:o,tasks:i}=s.data;return a`<article class="julep-agent">
    <h2>${n.name||n.id}</h2>
    ${n.about?a`<p>${n.about}</p>`:null}
    <dl class="kv">
      <div><dt>ID</dt><dd><code class="id">${n.id}</code></dd></div>
      <div><dt>Model</dt><dd>${n.model||a`<span class="muted">the platform's default</span>`}</dd></div>
      <div><dt>Instructions</dt><dd><${H} v=${n.instructions} /></dd></div>
      <div><dt>Updated</dt><dd>${b(n.updated_at)}</dd></div>
    </dl>
    <h3>Tasks</h3>
    ${i.length?a`<ul class="plain" id="julep-tasks">${i.map(l=>a`<li><a href=${"#/julep/task/"+l.id}>${l.name||l.id}</a>
      <span class="muted">${(l.main||[]).length} steps · ${b(l.created_at)}</span></li>`)}</ul>`:a`<p class="muted">No tasks.</p>`}
    <h3>Tools</h3>
    ${r.length?a`<ul class="plain">${r.map(l=>a`<li><code>${l.name}</code> <span class="badge">${l.type}</span>
      ${l.description?a`<span class="muted">${l.description}</span>`:null}</li>`)}</ul>`:a`<p class="muted">No tools.</p>`}
    <h3>Docs</h3>
    <${Ht} docs=${o} />
  </article>`}function Ls({id:e}){let{key:t}=x(),s=C(async()=>{let[r,o]=await Promise.all([k(t,"GET",ce+"/users/"+te(e)),Q(t,"/users/"+te(e)+"/docs")]);return{user:r,docs:o}},[t,e]);if(s.error)return a`<${v} error=${s.error} />`;if(!s.data)return a`<${S} what="the user" />`;let n=s.data.user;return a`<article>
    <h2>${n.name||n.id}</h2>
    ${n.about?a`<p>${n.about}</p>`:null}
    <dl class="kv"><div><dt>ID</dt><dd><code class="id">${n.id}</code></dd></div><div><dt>Created</dt><dd>${b(n.created_at)}</dd></div></dl>
    <h3>Docs</h3>
    <${Ht} docs=${s.data.docs} />
  </article>`}function js({id:e}){let{key:t}=x(),s=C(async()=>{let[r,o]=await Promise.all([k(t,"GET",ce+"/tasks/"+te(e)),Q(t,"/tasks/"+te(e)+"/executions")]);return{task:r,executions:o}},[t,e]);if(s.error)return a`<${v} error=${s.error} />`;if(!s.data)return a`<${S} what="the task" />`;let n=s.data.task;return a`<article>
    <h2>${n.name||n.id}</h2>
    ${n.description?a`<p>${n.description}</p>`:null}
    <p class="muted">Agent <a href=${"#/julep/agent/"+n.agent_id}><code class="id">${n.agent_id}</code></a> · ${b(n.created_at)}</p>
    <h3>Executions</h3>
    ${s.data.executions.length?a`<table class="grid" id="julep-executions"><caption class="sr-only">Executions of this task</caption>
      <thead><tr><th scope="col">Execution</th><th scope="col">Status</th><th scope="col">Transitions</th><th scope="col">Started</th><th scope="col">Updated</th></tr></thead>
      <tbody>${s.data.executions.map(r=>a`<tr><td><a href=${"#/julep/execution/"+r.id}><code class="id">${r.id}</code></a></td>
        <td><span class=${"badge status-"+r.status}>${r.status}</span></td><td>${r.transition_count??""}</td>
        <td>${b(r.created_at)}</td><td>${b(r.updated_at)}</td></tr>`)}</tbody>
    </table>`:a`<p class="muted">No executions.</p>`}
    <h3>Steps (main)</h3>
    <ol class="steps">${(n.main||[]).map(r=>a`<li><${H} v=${r} /></li>`)}</ol>
    ${n.input_schema?a`<h3>Input schema</h3><${M} data=${n.input_schema} />`:null}
  </article>`}function Bs({id:e}){let{key:t}=x(),s=C(async()=>{let[r,o]=await Promise.all([k(t,"GET",ce+"/executions/"+te(e)),Q(t,"/executions/"+te(e)+"/transitions?direction=asc")]);return{execution:r,transitions:[...o].sort((i,l)=>Date.parse(i.created_at)-Date.parse(l.created_at))}},[t,e]);if(s.error)return a`<${v} error=${s.error} />`;if(!s.data)return a`<${S} what="the execution" />`;let n=s.data.execution;return a`<article>
    <h2><code class="id">${n.id}</code> <span class=${"badge status-"+n.status} id="julep-execution-status">${n.status}</span></h2>
    <p class="muted">Task <a href=${"#/julep/task/"+n.task_id}><code class="id">${n.task_id}</code></a> · started ${b(n.created_at)} · updated ${b(n.updated_at)}</p>
    <p class="row"><button type="button" onClick=${s.reload}>Refresh</button></p>
    <dl class="kv">
      <div><dt>Input</dt><dd><${H} v=${n.input} /></dd></div>
      <div><dt>Output</dt><dd><${H} v=${n.output} /></dd></div>
      ${n.error?a`<div><dt>Error</dt><dd class="failed">${n.error}</dd></div>`:null}
    </dl>
    <h3>Transitions</h3>
    <ol class="events" id="julep-transitions">${s.data.transitions.map(r=>a`<li class="event" data-type=${r.type}>
      <div class="ev-head"><span class="type">${r.type}</span>
        <span class="muted">${r.current?`${r.current.workflow} step ${r.current.step}`:""}${r.next?` \u2192 step ${r.next.step}`:""}${r.metadata&&r.metadata.step_type?` \xB7 ${r.metadata.step_type}`:""}</span>
        <span class="muted">${b(r.created_at)}</span></div>
      <div class="ev-body"><${H} v=${r.output} /></div></li>`)}</ol>
    ${s.data.transitions.length?null:a`<p class="muted">No transitions yet.</p>`}
  </article>`}var Gt=encodeURIComponent,Ke=e=>e>=1<<20?`${(e/(1<<20)).toFixed(1)} MiB`:e>=1024?`${(e/1024).toFixed(1)} KiB`:`${e||0} B`;function Vt({args:e}){let{key:t}=x(),s=e[0]||"",n=C(()=>k(t,"GET","/v1/vector_stores?limit=100"),[t]);return a`<${D} title=${s?"Vector store":"Vector stores"}>
    <div class="split">
      <div class="main-col">
        ${s?a`<${Hs} key=${s} id=${s} />`:a`<${Fs} list=${n} />`}
      </div>
      <aside class="side" aria-label="Vector stores">
        <h2>Stores</h2>
        <${v} error=${n.error} />
        ${n.data?a`<ul class="sessions">${n.data.data.map(r=>a`<li class=${r.id===s?"current":""}>
          <a class="session-title" href=${"#/vector-stores/"+r.id} aria-current=${r.id===s?"page":void 0}>${r.name||r.id}</a>
          <span class="muted">${r.file_counts.total} files · <code class="id">${r.id}</code></span></li>`)}
          ${n.data.data.length?null:a`<li class="muted">None yet: create one with any OpenAI SDK pointed at /v1.</li>`}</ul>`:a`<${S} />`}
      </aside>
    </div>
  <//>`}function Fs({list:e}){return e.error?null:e.data?e.data.data.length?a`<table class="grid" id="vector-stores"><caption class="sr-only">Vector stores</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Files (done / all)</th><th scope="col">Size</th><th scope="col">Created</th></tr></thead>
    <tbody>${e.data.data.map(t=>a`<tr><td><a href=${"#/vector-stores/"+t.id}>${t.name||t.id}</a></td>
      <td><span class=${"badge status-"+t.status}>${t.status}</span></td><td>${t.file_counts.completed} / ${t.file_counts.total}</td>
      <td>${Ke(t.usage_bytes)}</td><td>${b(t.created_at)}</td></tr>`)}</tbody>
  </table>`:a`<p>No vector stores yet. They hold files for the <code>file_search</code> tool of assistants.</p>`:a`<${S} what="vector stores" />`}function Hs({id:e}){let{key:t}=x(),s=C(async()=>{let l="/v1/vector_stores/"+Gt(e),[c,p,d]=await Promise.all([k(t,"GET",l),k(t,"GET",l+"/files?limit=100"),k(t,"GET","/v1/files?limit=1000")]),$=new Map(d.data.map(h=>[h.id,h.filename]));return{store:c,files:p.data.map(h=>({...h,filename:$.get(h.id)}))}},[t,e]),[n,r]=g(""),o=F(async l=>(await k(t,"POST",`/v1/vector_stores/${Gt(e)}/search`,{query:l,max_num_results:5})).data);if(s.error)return a`<${v} error=${s.error} />`;if(!s.data)return a`<${S} what="the vector store" />`;let i=s.data.store;return a`<article>
    <h2>${i.name||i.id} <span class=${"badge status-"+i.status}>${i.status}</span></h2>
    <dl class="kv">
      <div><dt>ID</dt><dd><code class="id">${i.id}</code></dd></div>
      <div><dt>Size</dt><dd>${Ke(i.usage_bytes)}</dd></div>
      <div><dt>Created</dt><dd>${b(i.created_at)}</dd></div>
      ${i.expires_after?a`<div><dt>Expires</dt><dd>${i.expires_at?b(i.expires_at):""} (${i.expires_after.days} days after ${i.expires_after.anchor})</dd></div>`:null}
      ${Object.keys(i.metadata||{}).length?a`<div><dt>Metadata</dt><dd><${M} data=${i.metadata} /></dd></div>`:null}
    </dl>
    <p class="row"><button type="button" onClick=${s.reload}>Refresh</button></p>
    <h3>Files</h3>
    ${s.data.files.length?a`<table class="grid" id="vector-store-files"><caption class="sr-only">Files in this store</caption>
      <thead><tr><th scope="col">File</th><th scope="col">Status</th><th scope="col">Size indexed</th><th scope="col">Added</th></tr></thead>
      <tbody>${s.data.files.map(l=>a`<tr><td>${l.filename||""} <code class="id muted">${l.id}</code></td>
        <td><span class=${"badge status-"+l.status}>${l.status}</span>${l.last_error?a` <span class="failed">${l.last_error.message}</span>`:null}</td>
        <td>${Ke(l.usage_bytes)}</td><td>${b(l.created_at)}</td></tr>`)}</tbody>
    </table>`:a`<p class="muted">No files.</p>`}
    <h3>Search</h3>
    <form class="row" onSubmit=${l=>{l.preventDefault(),n.trim()&&o.run(n.trim())}}>
      <label for="vs-query" class="sr-only">Search this store</label>
      <input id="vs-query" value=${n} onInput=${l=>r(l.target.value)} placeholder="What the file_search tool would be asked" />
      <button type="submit" disabled=${o.busy}>Search</button>
    </form>
    <${v} error=${o.error} />
    ${o.done?a`<ol class="plain" id="vs-results">${o.done.map(l=>a`<li><strong>${l.filename}</strong> <span class="num muted">${l.score.toFixed(3)}</span>
      <pre class="text">${(l.content||[]).map(c=>c.text).join(`
`)}</pre></li>`)}
      ${o.done.length?null:a`<li class="muted">Nothing found.</li>`}</ol>`:null}
  </article>`}var We=[["chat","Chat",Et],["timeline","Timeline",Nt],["agents","Agents",Dt],["assistants","Assistants",Mt],["responses","Responses",Ot],["vector-stores","Vector stores",Vt],["julep","Julep",Ft],["operations","Operations",Bt]],Jt=()=>location.hash.replace(/^#\/?/,"").split("/").map(decodeURIComponent).filter(Boolean);function Gs(){let[e,t]=g(Jt());return R(()=>{let s=()=>t(Jt());return addEventListener("hashchange",s),()=>removeEventListener("hashchange",s)},[]),e}function Vs({onSignIn:e,error:t}){let[s,n]=g(""),[r,o]=g(!1),[i,l]=g(null);return R(()=>{ye().then(l,()=>l({ready:!1,status:{reason:"the node does not answer"}}))},[]),a`<main id="main" class="signin">
    <h1>Contrail console</h1>
    <form onSubmit=${async p=>{p.preventDefault(),o(!0),await e(s.trim()),o(!1)}} aria-describedby="where-key">
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" spellcheck="false" required value=${s}
        onInput=${p=>n(p.target.value)} autofocus />
      <button type="submit" disabled=${r}>${r?"Signing in\u2026":"Sign in"}</button>
      <${v} error=${t} />
    </form>
    <section id="where-key" class="help">
      <h2>Where is my key?</h2>
      <p>On its first start, <code>contrail serve</code> creates an admin account and writes its key
        to <code>contrail-data/admin.key</code> (in the node's <code>--data-dir</code>; mode 0600). Print it with:</p>
      <pre>cat contrail-data/admin.key</pre>
      <p>With it, make a key for a user: <code>contrail accounts create NAME</code> (the key is the last line), or in
        Operations once signed in. The key stays in this tab only (session storage) until you sign out.</p>
    </section>
    <p class="muted" aria-live="polite">${i?i.ready?"Node ready.":`Node not ready: ${i.status.reason||i.status.status}`:""}</p>
  </main>`}function Js({session:e,route:t,onSignOut:s,lost:n}){let[r,...o]=t,i=We.find(c=>c[0]===r)||We[0],l=i[2];return R(()=>{document.title=`${i[1]} \xB7 Contrail`},[i]),a`<${Fe.Provider} value=${e}>
    <a class="skip" href="#main" onClick=${c=>{c.preventDefault(),document.querySelector("main h1")?.focus()}}>Skip to content</a>
    <header class="top">
      <span class="brand">Contrail</span>
      <nav aria-label="Pages"><ul>${We.map(([c,p])=>a`<li><a href=${"#/"+c} aria-current=${c===i[0]?"page":void 0}>${p}</a></li>`)}</ul></nav>
      <span class="who">${e.me.username||e.me.account_id}${e.me.admin?a` <span class="badge">admin</span>`:null}</span>
      <button type="button" class="signout" onClick=${s}>Sign out</button>
    </header>
    ${n?a`<p class="error banner" role="alert">${n} <button type="button" onClick=${()=>location.reload()}>Reconnect</button></p>`:null}
    <main id="main"><${l} args=${o} /></main>
  <//>`}function Ks(){let e=Gs(),[t,s]=g(wt()),[n,r]=g(null),[o,i]=g(null),[l,c]=g(""),p=async h=>{try{let u=await k(h,"GET","/admin/whoami");xt(h),i(null),r(u),s(h)}catch(u){Le(),s(""),r(null),i(u instanceof ee&&u.status===401?`That key was refused: ${u.message}. Check that you copied all of it.`:u)}};R(()=>{t&&!n&&p(t)},[]);let d=ne(()=>!t||!n?null:{key:t,me:n,subs:new ve(t,h=>c(`Lost the live connection to the node (${h}).`))},[t,n]);R(()=>()=>d&&d.subs.close(),[d]),R(()=>{document.body.dataset.ready=d?"console":t?"checking":"signin",performance.getEntriesByName("console-interactive").length||performance.mark("console-interactive")});let $=()=>{Le(),s(""),r(null),i(null),location.hash=""};return d?a`<${Js} session=${d} route=${e} onSignOut=${$} lost=${l} />`:t&&!o?a`<main id="main"><p class="muted">Signing in…</p></main>`:a`<${Vs} onSignIn=${p} error=${o} />`}it(a`<${Ks} />`,document.getElementById("app"));})();
