(()=>{var C,Ke,Ft,J,Se,_e,ze,ue,Qe,qe,Te,Ye,oe=Symbol.for("pv"),$e={},fe=[],Ht=/^m(i|n|o|s|text|space)$/,Ee=Array.isArray,Ae=fe.slice,Z=Object.assign;function X(e){e&&e.parentNode&&e.remove()}function Xe(e,t,s){var n,r,a,i={},l=arguments.length;for(a in t)a=="key"?n=t[a]:a=="ref"&&typeof e!="function"?r=t[a]:i[a]=t[a];return l>2&&(i.children=l>3?Ae.call(arguments,2):s),ae(e,i,n,r,null)}function ae(e,t,s,n,r){var a={type:e,props:t,key:s,ref:n,__k:null,__:null,__b:0,__e:null,__c:null,constructor:oe,__v:r||++Ke,__i:-1,__u:0};return!r&&C.vnode&&C.vnode(a),a}function me(e){return e.children}function pe(e,t){this.props=e,this.context=t,this.__g=0}function K(e,t){if(t==null)return e.__&&K(e.__,e.__i+1);for(var s;t<e.__k.length;t++)if((s=e.__k[t])&&s.__e)return s.__e;return typeof e.type!="function"||e.props.__P?null:K(e)}function Gt(e){var t,s=e.__v,n=s.__e,r=[],a=[],i=e.__P;i&&((t=Z({constructor:oe},s)).__v=s.__v+1,C.vnode&&C.vnode(t),Ne(i,t,s,e.__n,i.namespaceURI,32&s.__u?[n]:null,r,n||K(s),32&s.__u,a),t.__v=s.__v,t.__.__k[t.__i]=t,at(r,t,a),s.__=s.__e=null,t.__e!=n&&Ze(t))}function Ze(e){if((e=e.__)&&e.__c&&!e.props.__P)return e.__e=null,e.__k.some(function(t){return t&&(e.__e=t.__e)}),Ze(e)}function Ce(e){(8&e.__g||(e.__g|=8,J.push(e),_e++))&&Se==C.debounceRendering||((Se=C.debounceRendering)||queueMicrotask)(et)}function et(){try{for(var e,t=1;J.length;)J.length>t&&J.sort(ze),e=J.shift(),t=J.length,8&e.__g&&Gt(e)}finally{(_e=J.length)&&(Se||queueMicrotask)(et)}}function tt(e,t,s,n,r,a,i,l,c,p,d){var $,h,u,g,_,f,m=n.__k||fe,k=t.length;for(c=Vt(s,t,m,c,k),$=0;$<k;$++)(u=s.__k[$])!=null&&(h=~u.__i&&m[u.__i]||$e,u.__i=$,f=Ne(e,u,h,r,a,i,l,c,p,d),g=u.__e,(h.ref!=u.ref||8&h.__u)&&(h.ref&&Ie(h.ref,null,u,h),u.ref&&d.push(u.ref,u.__c||g,u)),_=_||g,4&u.__u?(c=st(u,c,e,!h.__v),h.__e&&(h.__e=null)):typeof u.type=="function"&&f!==void 0?c=f:g&&(c=g.nextSibling),u.__u&=-21);return s.__e=_,c}function Vt(e,t,s,n,r){var a,i,l,c,p,d,$,h,u,g=s.length,_=g,f=0,m=0,k=e.__k=Array(r);for(a=0;a<r;a++)(i=t[a])!=null&&typeof i!="boolean"&&typeof i!="function"?(typeof i!="object"||i.constructor===String?i=k[a]=ae(null,i):Ee(i)?i=k[a]=ae(me,{children:i}):i.constructor===oe&&i.__b?i=k[a]=ae(i.type,i.props,i.key,i.ref,i.__v):k[a]=i,c=a+f,i.__=e,i.__b=e.__b+1,l=null,~(p=i.__i=Wt(i,s,c,_))&&(_--,(l=s[p])&&(l.__u|=2)),l&&l.__v?(i.__u|=16,p==c-1?f--:p==c+1?f++:p!=c&&(p>c?f--:f++,m=1)):(~p||(r>g?f--:r<g&&f++),typeof i.type!="function"&&(i.__u|=4))):k[a]=null;if(m){for(d=[],$=[],a=0;a<r;a++)if((i=k[a])&&16&i.__u){for(f=0,h=d.length;f<h;)d[u=f+h>>1]<i.__i?f=u+1:h=u;d[f]=i.__i,$[a]=f+1}for(f=d.length;a--;)$[a]&&($[a]==f?f--:k[a].__u|=4)}if(_)for(a=0;a<g;a++)!(l=s[a])||2&l.__u||(l.__e==n&&(n=K(l)),Pe(l,l));return n}function st(e,t,s,n){var r,a,i,l;if(typeof e.type=="function"){if(e.props.__P)return t;if(r=e.__k)for(a=0;a<r.length;a++)r[a]&&(r[a].__=e,t=st(r[a],t,s,!1));return t}for(t&&!t.parentNode&&(t=K(e))&&!t.parentNode&&(t=null),i=e.__e,l=t;l&&l.nodeType==8;)l=l.nextSibling;for(i!=l&&(!n&&s.moveBefore&&i.parentNode?s.moveBefore(i,t):s.insertBefore(i,t||null)),t=i;(t=t&&t.nextSibling)&&t.nodeType==8&&!t.data.startsWith("$s"););return t}function Wt(e,t,s,n){var r,a=e.key,i=e.type,l=t[s],c=l&&!(2&l.__u);if(l===null&&a==null||c&&a==l.key&&i==l.type)return s;if(n>(c?1:0)){for(r=s-1;r>=0;r--)if((l=t[r])&&!(2&l.__u)&&a==l.key&&i==l.type)return r;for(r=s+1;r<t.length;r++)if((l=t[r])&&!(2&l.__u)&&a==l.key&&i==l.type)return r}return-1}function Je(e,t,s){s==null&&(s=""),t[0]=="-"?e.setProperty(t,s):e[t]=s}function de(e,t,s,n,r){var a,i;if(t=="style")if(typeof s=="string")e.style.cssText=s;else{if(typeof n=="string"&&(e.style.cssText=n=""),n)for(t in n)s&&t in s||Je(e.style,t);if(s)for(t in s)n&&s[t]==n[t]||Je(e.style,t,s[t])}else if(t[0]=="o"&&t[1]=="n")typeof s!="function"&&(s=null),typeof n!="function"&&(n=null),(e.__e||(e.__e={}))[t]=s,s&&n||(i=Te[t]||(Te[t]=Jt(t)),(e.__a||(e.__a={}))[t]=qe,a=t!=(t=t.replace(Qe,"$1")),(t=t.slice(2))[0]<"a"&&(t=t.toLowerCase()),s?e.addEventListener(t,i,a):e.removeEventListener(t,i,a));else{if(r=="http://www.w3.org/2000/svg")t=t.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(t!="width"&&t!="height"&&t!="href"&&t!="list"&&t!="form"&&t!="tabIndex"&&t!="download"&&t!="rowSpan"&&t!="colSpan"&&t!="role"&&t!="popover"&&t in e)try{return void(e[t]=s??"")}catch{}if(typeof s=="function")return;s==null||s===!1&&t[4]!="-"?e.removeAttribute(t):e.setAttribute(t,t=="popover"&&s==1?"":s)}}function Jt(e){return function(t){var s=this.__e;if(s){if(s=s[e],t[ue]==null)t[ue]=qe++;else if(t[ue]<this.__a[e])return;return s(C.event?C.event(t):t)}}}function Ne(e,t,s,n,r,a,i,l,c,p){var d,$,h,u,g,_,f,m,k,A,E,N,M,L,S,W,U,Y,G=t.type;if(t.constructor!==oe)return null;128&s.__u&&(c=32&s.__u,d=s.__c.__z)&&(t.__u|=c,$=a=[],d.nodeType==8?l=he(d,a):a.push(d),l=a[0]||l),(d=C.__b)&&d(t);e:if(typeof G=="function"){h=i.length;try{if(m=t.props,k=(d=G.prototype)&&d.render,A=(d=G.contextType)&&n[d.__c],E=d?A?A.props.value:d.__:n,(u=s.__c)?(t.__c=u,2&u.__g&&(u.__g|=1)):(k?t.__c=u=new G(m,E):(t.__c=u=new pe(m,E),u.constructor=G,u.render=zt),A&&A.sub(u),u.state||(u.state={}),u.__n=n,u.__g|=8,u.__h=[],u.__k=[]),k&&(u.__s||(u.__s=u.state),G.getDerivedStateFromProps&&(u.__s==u.state&&(u.__s=Z({},u.__s)),Z(u.__s,G.getDerivedStateFromProps(m,u.__s)))),g=u.props,_=u.state,u.__v=t,s.__c){if(m!==g&&k&&!G.getDerivedStateFromProps&&u.componentWillReceiveProps&&u.componentWillReceiveProps(m,E),t.__v==s.__v&&!(8&u.__g)||!(4&u.__g)&&u.shouldComponentUpdate&&u.shouldComponentUpdate(m,u.__s,E)===!1){t.__v!=s.__v&&(u.props=m,u.state=u.__s,u.__g&=-9),t.__e=s.__e,t.__k=s.__k,t.__k.some(function(B){B&&(B.__=t)}),fe.push.apply(u.__h,u.__k),u.__k=[],u.__h.length&&i.push(u),l=K(s);break e}u.componentWillUpdate&&u.componentWillUpdate(m,u.__s,E),k&&u.componentDidUpdate&&u.__h.push(function(){u.componentDidUpdate(g,_,f)})}else k&&!G.getDerivedStateFromProps&&u.componentWillMount&&u.componentWillMount(),k&&u.componentDidMount&&u.__h.push(u.componentDidMount);u.context=E,u.props=m,u.__P=e,u.__g&=-5,N=C.__r,M=k?25:0;do u.__g&=-9,N&&N(t),d=u.render(u.props,u.state=u.__s,u.context);while(8&u.__g&&++M<25);k&&(fe.push.apply(u.__h,u.__k),u.__k=[]),u.state=u.__s,u.getChildContext&&(n=Z({},n,u.getChildContext())),k&&s.__c&&u.getSnapshotBeforeUpdate&&(f=u.getSnapshotBeforeUpdate(g,_)),L=d&&d.type===me&&d.key==null?d.props.children:d,m.__P&&(d=l,r=(e=m.__P).namespaceURI,c=a=null,s.props&&s.props.__P!=e&&(s.__k.some(function(B){B&&Pe(B,B)}),s.__k=null),l=s.__k?K(s,0):null),l=tt(e,Ee(L)?L:[L],t,s,n,r,a,i,l,c,p),m.__P&&(t.__e=null,l=d),t.__u&=-161,$&&$.some(X),u.__h.length&&i.push(u),1&u.__g&&(u.__g&=-4)}catch(B){if(i.length=h,t.__v=null,c||a)if(B&&B.then){if(t.__u|=128|c,a){for(~(U=a.indexOf(l||void 0))||(U=a.length);(Y=a[U-1])&&Y.nodeType==8;)U--;for(;U<a.length;U++)if(Y=a[U])if(a[U]=null,S){if(Y==W)break}else{if(Y.nodeType!=8)break;Y.data.startsWith("$s")&&(W=he(S=Y))}}if(!S){for(;l&&l.nodeType==8&&l.nextSibling;)l=l.nextSibling;S=l}(d=he(S=t.__c.__z||(t.__c.__z=S)))?(t.__e=S,l=d):t.__e=l,l=l&&l.nextSibling}else a&&a.some(X);else t.__e=s.__e;t.__k||(t.__k=s.__k||[]),B&&B.then||nt(t),C.__e(B,t,s)}}else l=t.__e=Kt(s.__e,t,s,n,r,a,i,c,p,e);return(d=C.diffed)&&d(t),l}function he(e,t){if(e&&e.nodeType==8&&e.data.startsWith("$s"))for(var s=1;e=e.nextSibling;){if(e.nodeType==8){if(e.data.startsWith("$s"))s++;else if(e.data.startsWith("/$s")&&!--s)return e}t&&t.push(e)}}function nt(e){e&&(e.__c&&(e.__c.__g|=4),e.__k&&e.__k.some(nt))}function at(e,t,s){for(var n=0;n<s.length;)Ie(s[n++],s[n++],s[n++]);C.__c&&C.__c(t,e),e.some(function(r){try{e=r.__h,r.__h=[],e.some(function(a){a.call(r)})}catch(a){C.__e(a,r.__v)}})}function Kt(e,t,s,n,r,a,i,l,c,p){var d,$,h,u,g,_,f,m,k=s.props||$e,A=t.props,E=t.type;if(E=="svg"?r="http://www.w3.org/2000/svg":E=="math"?r="http://www.w3.org/1998/Math/MathML":r||(r="http://www.w3.org/1999/xhtml"),a){for(d=0;d<a.length;d++)if((g=a[d])&&(E?g.localName==E:g.nodeType==3)){e=g,a[d]=null;break}}if(!e){if(m=p.ownerDocument||document,!E)return m.createTextNode(A);e=m.createElementNS(r,E,A.is?A:p),l&&(C.__m&&C.__m(t,a),l=!1),a=null}if(E){if(p=E=="template"&&e.content||e,a=E=="textarea"&&A.defaultValue!=null?null:a&&Ae.call(p.childNodes),!l&&a)for(k={},d=0;d<e.attributes.length;d++)k[(g=e.attributes[d]).name]=g.value;for(d in k)g=k[d],d=="dangerouslySetInnerHTML"?h=g:d=="children"||d in A||d=="value"&&"defaultValue"in A||d=="checked"&&"defaultChecked"in A||de(e,d,null,g,r);for(d in A)g=A[d],d=="children"?u=g:d=="dangerouslySetInnerHTML"?$=g:d=="value"?_=g:d=="checked"?f=g:l&&typeof g!="function"||k[d]===g||de(e,d,g,k[d],r);$?(l||h&&($.__html==h.__html||$.__html==e.innerHTML)||(e.innerHTML=$.__html),t.__k=[]):(h&&(e.textContent=""),(E=="foreignObject"||r=="http://www.w3.org/1998/Math/MathML"&&Ht.test(E))&&(r="http://www.w3.org/1999/xhtml"),tt(p,Ee(u)?u:[u],t,s,n,r,a,i,a?a[0]:s.__k&&K(s,0),l,c),a&&a.some(X)),l&&E!="textarea"||(d="value",E=="progress"&&_==null?e.removeAttribute(d):_==null||_===e[d]&&(E!="progress"||_)||de(e,d,_,k[d],r),d="checked",f!=null&&f!=e[d]&&de(e,d,f,k[d],r))}else k===A||l&&e.data==A||(e.data=A);return e}function Ie(e,t,s,n){try{typeof e=="function"?t?t.__x=e(t)||1:n&&(n=n.__c||n.__e)&&(t=n.__x)&&(n.__x=null,typeof t=="function"?t():e(null)):e.current=t}catch(r){C.__e(r,s)}}function Pe(e,t,s){var n,r,a,i;if(C.unmount&&C.unmount(e),!(n=e.ref)||n.current&&n.current!=e.__e||Ie(n,null,t,e),n=e.__c){if(n.componentWillUnmount)try{n.componentWillUnmount()}catch(l){C.__e(l,t)}n.__P=n.__n=null}if(n=e.__k)for(i=0;i<n.length;i++)n[i]&&Pe(n[i],t,typeof e.type!="function"||s&&!e.props.__P);!s&&(n=e.__c)&&(n=n.__z)&&(r=he(n,a=[]))&&(n==e.__e&&a.some(X),X(r),X(n)),s||X(e.__e),e.__e=e.__c=e.__=null}function zt(e,t,s){return this.constructor(e,s)}function ot(e,t){var s,n,r,a;C.__&&C.__(e,t),t.nodeType==9&&(t=t.documentElement),n=(s=e&&32&e.__u)?null:t.__k,t.__k=ae(me,{children:[e]}),r=[],a=[],Ne(t,t.__k,n||$e,$e,t.namespaceURI,n?null:t.firstChild?Ae.call(t.childNodes):null,r,n?n.__e:t.firstChild,s,a),at(r,t.__k,a),t.__k.props.children=null}function rt(e){function t(s){var n,r;return this.getChildContext||(n=new Set,(r={})[t.__c]=this,this.getChildContext=function(){return r},this.shouldComponentUpdate=function(a){this.props.value!=a.value&&n.forEach(function(i){i.__g|=4,Ce(i)})},this.sub=function(a){n.add(a);var i=a.componentWillUnmount;a.componentWillUnmount=function(){n.delete(a),i&&i.call(a)}}),s.children}return t.__c="__cC"+Ye++,t.__=e,t.Provider=(t.Consumer=function(s,n){return s.children(n)}).contextType=t,t}C={__e:function(e,t,s,n){for(var r,a,i;t=t.__;)if((r=t.__c)&&!(1&r.__g)){r.__g|=4;try{if((i=(a=r.constructor)&&a.getDerivedStateFromError)&&r.setState(a.getDerivedStateFromError(e)),r.componentDidCatch&&(r.componentDidCatch(e,n||{}),i=1),i&&8&r.__g)return void(r.__g|=2)}catch(l){e=l}}throw _e=0,e}},Ke=0,Ft=function(e){return e!=null&&e.constructor===oe},pe.prototype.setState=function(e,t){var s=this.__s;s&&s!=this.state||(s=this.__s=Z({},this.state)),typeof e=="function"&&(e=e(Z({},s),this.props)),e&&(Z(s,e),this.__v&&(t&&this.__k.push(t),Ce(this)))},pe.prototype.forceUpdate=function(e){this.__v&&(this.__g|=4,e&&this.__h.push(e),Ce(this))},pe.prototype.render=me,J=[],_e=0,ze=function(e,t){return e.__v.__b-t.__v.__b},ue=Symbol(),Qe=/(PointerCapture)$|Capture$/i,qe=0,Te={},Ye=0;var se,I,Re,it,De=Object.is,ie=0,ft=[],Me=[],P=C,lt=P.__b,ct=P.__r,dt=P.diffed,ut=P.__c,pt=P.unmount,ht=P.__;function ge(e,t){P.__h&&P.__h(I,e,ie||t),ie=0;var s=I.__H||(I.__H={__:[],__h:[]});return e>=s.__.length&&s.__.push({}),s.__[e]}function y(e){return ie=1,Qt(bt,e)}function Qt(e,t,s){var n=ge(se++,2);if(n.t=e,!n.__c&&(n.__=[s?s(t):bt(void 0,t),function(a){var i=(n.__N||n.__)[0],l=n.t(i,a);De(i,l)||(n.__N=[l,n.__[1]],n.__c.setState({}))}],n.__c=I,!I.__f)){I.__f=!0;var r=I.shouldComponentUpdate;I.shouldComponentUpdate=function(a,i,l){var c=this.__H;if(!c)return!0;var p=!1,d=this.props!=a;if(c.__.some(function(h){h.__N&&(p=!0,De(h.__[0],h.__N[0])||(d=!0))}),r){var $=r.call(this,a,i,l);return p?$||d:$}return!p||d}}return n.__}function R(e,t){var s=ge(se++,3);!P.__s&&yt(s.__H,t)&&(s.__P=!0,s.__=e,s.u=t,I.__H.__h.push(s))}function H(e){return ie=5,ne(function(){return{current:e}},[])}function ne(e,t){var s=ge(se++,7);return yt(s.__H,t)&&(s.__=e(),s.__H=t),s.__}function mt(e,t){return ie=8,ne(function(){return e},t)}function gt(e){var t=I.context[e.__c],s=ge(se++,9);return s.c=e,t?(s.__==null&&(s.__=!0,t.sub(I)),t.props.value):e.__}function Yt(){var e;do{for(;e=Me.shift();)try{re(e)}catch(s){P.__e(s,{__:(e=e.__P)&&e.__v})}for(;e=ft.shift();){var t=e.__H;if(e.__P&&t)try{t.__h.some(re),t.__h.some(Le),t.__h=[]}catch(s){t.__h=[],P.__e(s,e.__v)}}}while(Me.length)}P.__b=function(e){I=null,lt&&lt(e)},P.__=function(e,t){e&&t.__k&&t.__k.__m&&(e.__m=t.__k.__m),ht&&ht(e,t)},P.__r=function(e){ct&&ct(e),se=0;var t=(I=e.__c).__H;t&&(Re==I?I.__h=[]:(t.__h.some(re),t.__h.some(Le),se=0),t.__h=[],t.__.some(function(s){s.__N&&(s.__=s.__N),s.u=s.__N=void 0})),Re=I},P.diffed=function(e){dt&&dt(e);var t=e.__c;t&&t.__H&&(t.__H.__h.length&&$t(ft.push(t)),t.__H.__.some(function(s){s.u&&(s.__H=s.u)})),Re=I=null},P.__c=function(e,t){t.some(function(s){try{s.__h.some(re),s.__h=s.__h.filter(function(n){return!n.__||Le(n)})}catch(n){s.__h=[function(){throw n}]}}),ut&&ut(e,t)},P.unmount=function(e){pt&&pt(e);var t,s,n=e.__c;n&&n.__H&&(n.__H.__.some(function(r){try{if(r.__P&&r.__c){if(s===void 0){for(s=e.__;s&&(!s.__c||!s.__c.__P);)s=s.__;s=s&&s.__c}r.__P=s,$t(Me.push(r))}else re(r)}catch(a){t=a}}),n.__H=void 0,t&&P.__e(t,n.__v))};var _t=typeof requestAnimationFrame=="function";function Xt(e){var t,s=function(){clearTimeout(n),_t&&cancelAnimationFrame(t),setTimeout(e)},n=setTimeout(s,35);_t&&(t=requestAnimationFrame(s))}function $t(e){e!=1&&it==P.requestAnimationFrame||((it=P.requestAnimationFrame)||Xt)(Yt)}function re(e){var t=I,s=e.__c;typeof s=="function"&&(e.__c=void 0,s()),I=t}function Le(e){var t=I;e.__c=e.__(),I=t}function yt(e,t){return!e||e.length!=t.length||t.some(function(s,n){return!De(s,e[n])})}function bt(e,t){return typeof t=="function"?t(e):t}var Ue="contrail.key",vt=()=>sessionStorage.getItem(Ue)||"",kt=e=>sessionStorage.setItem(Ue,e),Oe=()=>sessionStorage.removeItem(Ue),ee=class extends Error{constructor(t,s,n,r){super(n),this.status=t,this.code=s||"",this.field=r||""}};function wt(e){if(!(e instanceof ee))return`Could not reach the node (${e.message}). Is \`contrail serve\` still running?`;switch(e.status){case 401:return`The node refused the key: ${e.message}. Sign out and sign in with a valid key.`;case 403:return`Not allowed with this key: ${e.message}`;case 429:return`Slow down: ${e.message}`}return e.field?`${e.message} (field ${e.field})`:e.message}async function je(e,t,s,n,r={}){let a={...r};e&&(a.Authorization="Bearer "+e),n!==void 0&&(a["Content-Type"]="application/json");let i;try{i=await fetch(s,{method:t,headers:a,body:n===void 0?void 0:JSON.stringify(n)})}catch(p){throw new Error(p.message||String(p))}let l=await i.text(),c=null;try{c=l?JSON.parse(l):null}catch{c=null}return{res:i,data:c,text:l}}async function w(e,t,s,n){let{res:r,data:a,text:i}=await je(e,t,s,n);if(!r.ok){let l=a&&a.error||{};throw new ee(r.status,l.code||l.type,l.message||i||r.statusText,l.field||l.param)}return a}var Zt={UNAUTHENTICATED:401,FORBIDDEN:403,NOT_FOUND:404,RATE_LIMITED:429,INTERNAL_SERVER_ERROR:500};async function O(e,t,s={}){return(await Be(e,t,s)).data}async function Be(e,t,s={}){let{res:n,data:r,text:a}=await je(e,"POST","/graphql",{query:t,variables:s}),i=r&&r.errors||[];if(!n.ok||i.length){let c=(i[0]||{}).extensions||{},p=i.length?i.map($=>$.message).join("; "):a||n.statusText,d=n.status!==200?n.status:Zt[c.code]||400;throw new ee(d,c.code,p,c.field)}return{data:r.data,extensions:r.extensions||{}}}async function ye(){let e=await je("","GET","/readyz");return{ready:e.res.ok,status:e.data||{status:e.text}}}var be=class{constructor(t,s){this.key=t,this.onClosed=s||(()=>{}),this.next=1,this.subs=new Map,this.closedByUs=!1,this.ready=this.open()}open(){return new Promise((t,s)=>{let n=(location.protocol==="https:"?"wss://":"ws://")+location.host+"/graphql",r=new WebSocket(n,"graphql-transport-ws");this.ws=r;let a=!1;r.onopen=()=>r.send(JSON.stringify({type:"connection_init",payload:{Authorization:"Bearer "+this.key}})),r.onmessage=i=>{let l;try{l=JSON.parse(i.data)}catch{return}switch(l.type){case"connection_ack":a=!0,t(this);break;case"ping":r.send(JSON.stringify({type:"pong"}));break;case"next":{let c=this.subs.get(l.id);c&&l.payload&&l.payload.errors&&l.payload.errors.length?c.error(l.payload.errors.map(p=>p.message).join("; ")):c&&l.payload&&c.next(l.payload.data);break}case"error":{let c=this.subs.get(l.id);this.subs.delete(l.id),c&&c.error((l.payload||[]).map(p=>p.message).join("; ")||"subscription refused");break}case"complete":{let c=this.subs.get(l.id);this.subs.delete(l.id),c&&c.complete&&c.complete();break}}},r.onclose=i=>{let l=i.reason||`the connection closed (code ${i.code})`;if(!a){s(new Error(l));return}for(let c of this.subs.values())c.error("lost the live connection to the node: "+l);this.subs.clear(),this.closedByUs||this.onClosed(l)}})}subscribe(t,s,n){let r=String(this.next++),a=!1;return this.ready.then(()=>{a||(this.subs.set(r,n),this.ws.send(JSON.stringify({id:r,type:"subscribe",payload:{query:t,variables:s}})))},i=>n.error(i.message)),()=>{a=!0,this.subs.delete(r)&&this.ws.readyState===WebSocket.OPEN&&this.ws.send(JSON.stringify({id:r,type:"complete"}))}}close(){this.closedByUs=!0,this.ws.close(1e3,"bye")}};var St=function(e,t,s,n){var r;t[0]=0;for(var a=1;a<t.length;a++){var i=t[a++],l=t[a]?(t[0]|=i?1:2,s[t[a++]]):t[++a];i===3?n[0]=l:i===4?n[1]=Object.assign(n[1]||{},l):i===5?(n[1]=n[1]||{})[t[++a]]=l:i===6?n[1][t[++a]]+=l+"":i?(r=e.apply(l,St(e,l,s,["",null])),n.push(r),l[0]?t[0]|=2:(t[a-2]=0,t[a]=r)):n.push(l)}return n},xt=new Map;function Tt(e){var t=xt.get(this);return t||(t=new Map,xt.set(this,t)),(t=St(this,t.get(e)||(t.set(e,t=(function(s){for(var n,r,a=1,i="",l="",c=[0],p=function(h){a===1&&(h||(i=i.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?c.push(0,h,i):a===3&&(h||i)?(c.push(3,h,i),a=2):a===2&&i==="..."&&h?c.push(4,h,0):a===2&&i&&!h?c.push(5,0,!0,i):a>=5&&((i||!h&&a===5)&&(c.push(a,0,i,r),a=6),h&&(c.push(a,h,0,r),a=6)),i=""},d=0;d<s.length;d++){d&&(a===1&&p(),p(d));for(var $=0;$<s[d].length;$++)n=s[d][$],a===1?n==="<"?(p(),c=[c],a=3):i+=n:a===4?i==="--"&&n===">"?(a=1,i=""):i=n+i[0]:l?n===l?l="":i+=n:n==='"'||n==="'"?l=n:n===">"?(p(),a=1):a&&(n==="="?(a=5,r=i,i=""):n==="/"&&(a<5||s[d][$+1]===">")?(p(),a===3&&(c=c[0]),a=c,(c=c[0]).push(2,0,a),a=0):n===" "||n==="	"||n===`
`||n==="\r"?(p(),a=2):i+=n),a===3&&i==="!--"&&(a=4,c=c[0])}return p(),c})(e)),t),arguments,[])).length>1?t:t[0]}var o=Tt.bind(Xe),Fe=rt(null),x=()=>gt(Fe);function q(e,t){let[s,n]=y({data:null,error:null,loading:!0}),r=H(0),a=mt(()=>{let i=++r.current;n(l=>({...l,loading:!0})),e().then(l=>i===r.current&&n({data:l,error:null,loading:!1}),l=>i===r.current&&n({data:null,error:l,loading:!1}))},t);return R(a,[a]),{...s,reload:a}}function F(e){let[t,s]=y({busy:!1,error:null,done:null});return{...t,run:async(...a)=>{s({busy:!0,error:null,done:null});try{let i=await e(...a);return s({busy:!1,error:null,done:i}),i}catch(i){s({busy:!1,error:i,done:null});return}},reset:()=>s({busy:!1,error:null,done:null})}}function v({error:e}){if(!e)return null;let t=typeof e=="string"?e:wt(e);return o`<p class="error" role="alert">${t}</p>`}function T({what:e}){return o`<p class="muted" aria-live="polite">Loading ${e||""}…</p>`}function D({title:e,actions:t,children:s}){let n=H(null);return R(()=>n.current&&n.current.focus(),[e]),o`<section class="page">
    <header class="page-head"><h1 tabindex="-1" ref=${n}>${e}</h1>${t?o`<div class="actions">${t}</div>`:null}</header>
    ${s}
  </section>`}var b=e=>{if(e==null||e==="")return"";let t=typeof e=="number"?new Date(e*1e3):new Date(e);return isNaN(t)?String(e):t.toLocaleString()};function ve(e){if(e<0&&(e=0),e<1e3)return`+${Math.round(e)}ms`;if(e<6e4)return`+${(e/1e3).toFixed(2)}s`;let t=Math.floor(e/6e4),s=Math.round(e%6e4/1e3);return`+${t}m${String(s).padStart(2,"0")}s`}function ke({score:e,fits:t,label:s}){let n=Math.max(0,Math.min(1,e))*100;return o`<span class="score">
    <span class="bar" aria-hidden="true"><span class=${t?"fill fits":"fill"} style=${{width:n.toFixed(1)+"%"}}></span></span>
    <span class="num">${e.toFixed(3)}</span>
    ${t?o`<span class="badge ok" title="above the router's threshold">fits</span>`:null}
    ${s?o`<span class="sr-only">${s}</span>`:null}
  </span>`}function V({v:e,depth:t=0}){return e==null?o`<span class="muted">—</span>`:typeof e=="string"?e.includes(`
`)||e.length>120?o`<pre class="text">${e}</pre>`:o`<span class="text">${e}</span>`:typeof e!="object"?o`<span class="text">${String(e)}</span>`:t>3?o`<code>${JSON.stringify(e)}</code>`:Array.isArray(e)?e.length?o`<ol class="kv-list">${e.map(s=>o`<li><${V} v=${s} depth=${t+1} /></li>`)}</ol>`:o`<span class="muted">none</span>`:o`<${j} data=${e} depth=${t+1} />`}function j({data:e,depth:t=0}){let s=Object.keys(e||{});return s.length?o`<dl class="kv">${s.map(n=>o`<div><dt>${n}</dt><dd><${V} v=${e[n]} depth=${t} /></dd></div>`)}</dl>`:o`<span class="muted">no data</span>`}var we="handle name frontendAgentId created messages(first: 1) { text }";function xe(e){if(e.name)return e.name;let t=e.messages&&e.messages[0]&&e.messages[0].text.trim().replace(/\s+/g," ");return t?t.length>48?t.slice(0,47).replace(/\s+\S*$/,"").replace(/[\s,;:.!?-]+$/,"")+"\u2026":t:"New session"}function le({label:e,value:t,id:s}){let[n,r]=y(""),a=H(null);return o`<div class="copy">
    <label for=${s}>${e}</label>
    <div class="row"><input id=${s} ref=${a} readonly value=${t} onFocus=${l=>l.target.select()} />
    <button type="button" onClick=${async()=>{a.current.select();try{await navigator.clipboard.writeText(t),r("Copied.")}catch{r(document.execCommand&&document.execCommand("copy")?"Copied.":"Selected: press Ctrl-C to copy.")}}}>Copy</button></div>
    <span class="muted" aria-live="polite">${n}</span>
  </div>`}var He="id text type timestamp sentBy { handle } inReplyTo { id } embeds { key contentType uri }",es=`{ allSessions(first: 50) { ${we} }
  allAgents(first: 1000) { agentId handle name kind } }`;function Ct({args:e}){let{key:t}=x(),s=e[0]||"",n=q(()=>O(t,es),[t,s]),[r,a]=y("fixie"),[i,l]=y(""),[c,p]=y(null),d=n.data&&n.data.allAgents||[],$=_=>(d.find(f=>f.agentId===_)||{}).handle||_,h=(n.data&&n.data.allSessions||[]).find(_=>_.handle===s),u=!h||!h.name&&!(h.messages||[]).length,g=async _=>{p(null);try{let f=await O(t,"mutation($a: String) { createSession(sessionData: {frontendAgentId: $a}) { session { handle } } }",{a:r});l(_||""),location.hash="#/chat/"+f.createSession.session.handle}catch(f){p(f)}};return o`<${D} title=${s?`Chat \xB7 ${s}`:"Chat"}>
    <div class="split">
      <aside class="side" aria-label="Sessions">
        <form class="stack" onSubmit=${_=>{_.preventDefault(),g("")}}>
          <label for="chat-agent">Agent for a new session</label>
          <select id="chat-agent" value=${r} onChange=${_=>a(_.target.value)}>
            ${(d.length?d:[{handle:"fixie"}]).map(_=>o`<option value=${_.handle}>${_.handle}${_.name?` \u2014 ${_.name}`:""}</option>`)}
          </select>
          <button type="submit">New session</button>
        </form>
        <${v} error=${c||n.error} />
        <h2>Past sessions</h2>
        ${n.loading&&!n.data?o`<${T} what="sessions" />`:null}
        <ul class="sessions">
          ${(n.data&&n.data.allSessions||[]).map(_=>o`<li class=${_.handle===s?"current":""}>
            <a class="session-title" href=${"#/chat/"+_.handle} aria-current=${_.handle===s?"page":void 0}>${xe(_)}</a>
            <span class="muted">${$(_.frontendAgentId)} · ${b(_.created)} · <code class="id">${_.handle}</code></span>
            <a class="small" href=${"#/timeline/"+_.handle} aria-label=${"Timeline of "+_.handle}>timeline</a>
          </li>`)}
        </ul>
      </aside>
      <div class="main-col">
        ${s?o`<${ts} key=${s} handle=${s} pending=${i} onPendingSent=${()=>l("")} onSent=${u?n.reload:null} />`:o`<${qt} ready=${!0} label=${`Message to ${r} (starts a new session)`} onSend=${_=>g(_)} />`}
      </div>
    </div>
  <//>`}function ts({handle:e,pending:t,onPendingSent:s,onSent:n}){let{key:r,subs:a}=x(),[i,l]=y([]),[c,p]=y({}),[d,$]=y(!1),[h,u]=y(""),[g,_]=y(null),f=H(null),m=H(!1),k=N=>l(M=>{let L=new Map(M.map(S=>[S.id,S]));for(let S of N)L.set(S.id,S);return[...L.values()].sort((S,W)=>Date.parse(S.timestamp)-Date.parse(W.timestamp))});R(()=>a.subscribe(`subscription($h: String!) { sessionMessages(handle: $h) { kind sequence
        message { ${He} } delta { messageId inReplyTo index text } } }`,{h:e},{next:M=>{let L=M.sessionMessages;if(L.kind==="ready")O(r,`query($h: String!) { sessionByHandle(handle: $h) { frontendAgentId messages(first: 1000) { ${He} } } }`,{h:e}).then(S=>{if(!S.sessionByHandle){_(`No session ${e} in your account.`);return}u(S.sessionByHandle.frontendAgentId),k(S.sessionByHandle.messages),$(!0)},_);else if(L.kind==="message")k([L.message]),p(S=>{if(!S[L.message.id])return S;let{[L.message.id]:W,...U}=S;return U});else if(L.kind==="delta"){let S=L.delta;f.current&&!f.current.reply&&(f.current.reply=S.messageId),p(W=>{let U=W[S.messageId]||{text:"",inReplyTo:S.inReplyTo,deltas:0};return{...W,[S.messageId]:{...U,text:U.text+S.text,deltas:U.deltas+1}}})}},error:M=>_(M)}),[e]),R(()=>{let N=f.current;N&&N.reply&&c[N.reply]&&!m.current&&(m.current=!0,performance.measure("first-token",{start:N.start,end:performance.now()}),f.current=null)},[c]);let A=async N=>{_(null),f.current={start:performance.now(),reply:null},m.current=!1;try{let M=await O(r,`mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}) { message { ${He} } } }`,{s:e,t:N});return k([M.sendSessionMessage.message]),n&&n(),!0}catch(M){return f.current=null,_(M),!1}};R(()=>{d&&t&&(s(),A(t),document.getElementById("chat-input")?.focus())},[d]);let E=H(null);return R(()=>{let N=E.current;N&&(N.scrollTop=N.scrollHeight)},[i,c]),o`<div class="conversation">
    <p class="muted">Session <code>${e}</code>${h?o` · front agent <code>${h}</code>`:null}${" \xB7 "}<a href=${"#/timeline/"+e}>Timeline of this session</a></p>
    <${v} error=${g} />
    <ol class="messages" ref=${E} aria-label="Messages" aria-live="polite" aria-relevant="additions">
      ${i.map(N=>o`<${ss} m=${N} />`)}
      ${Object.entries(c).map(([N,M])=>o`<li class="msg response streaming" data-streaming="true" data-reply-id=${N} aria-busy="true">
        <div class="meta">writing… <span class="muted">(${M.deltas} pieces so far)</span></div>
        <div class="body">${M.text}</div>
      </li>`)}
    </ol>
    ${d?null:o`<${T} what="the session" />`}
    <${qt} ready=${d} label="Message" onSend=${A} />
  </div>`}function ss({m:e}){return o`<li class=${"msg "+e.type} data-message-id=${e.id} data-type=${e.type}>
    <div class="meta"><strong>${e.sentBy.handle}</strong> · <time datetime=${e.timestamp}>${b(e.timestamp)}</time>${e.type==="error"?" \xB7 no answer":""}</div>
    <div class="body">${e.text}</div>
    ${e.embeds.length?o`<ul class="embeds">${e.embeds.map(t=>o`<li><${ns} e=${t} /></li>`)}</ul>`:null}
  </li>`}function ns({e}){let t=e.uri.startsWith("data:");try{t=t||new URL(e.uri,location.href).origin===location.origin}catch{t=!1}return e.contentType.startsWith("image/")&&t?o`<figure><img src=${e.uri} alt=${"embed #"+e.key} /><figcaption>#${e.key} · ${e.contentType}</figcaption></figure>`:o`<a href=${e.uri} target="_blank" rel="noopener noreferrer">#${e.key} (${e.contentType})</a>`}function qt({ready:e,label:t,onSend:s}){let[n,r]=y(""),[a,i]=y(!1);return o`<form class="composer" onSubmit=${async c=>{c.preventDefault();let p=n.trim();if(!p)return;i(!0);let d=await s(p);i(!1),d!==!1&&r("")}}>
    <label for="chat-input">${t}</label>
    <div class="row">
      <input id="chat-input" autocomplete="off" value=${n} onInput=${c=>r(c.target.value)} placeholder="What is 12 times 7?" />
      <button type="submit" disabled=${!e||a}>${a?"Sending\u2026":"Send"}</button>
    </div>
  </form>`}function At({args:e}){let t=e[0]||"";return t?o`<${os} key=${t} handle=${t} />`:o`<${as} />`}function as(){let{key:e}=x(),t=q(()=>O(e,`{ allSessions(first: 100) { ${we} } }`),[e]);return o`<${D} title="Timeline">
    <p>Pick a session to see every event of it in the log, live while it runs.</p>
    <${v} error=${t.error} />
    ${t.loading?o`<${T} what="sessions" />`:null}
    <ul class="sessions">${(t.data&&t.data.allSessions||[]).map(s=>o`<li>
      <a class="session-title" href=${"#/timeline/"+s.handle}>${xe(s)}</a> <span class="muted">${b(s.created)} · <code class="id">${s.handle}</code></span></li>`)}</ul>
  <//>`}function os({handle:e}){let{subs:t}=x(),[s,n]=y([]),[r,a]=y(null),[i,l]=y(-1);R(()=>t.subscribe("subscription($h: String!) { sessionEvents(handle: $h, fromSequence: 0) { sequence id type time version actor correlationId causationId data } }",{h:e},{next:f=>n(m=>m.length&&m[m.length-1].sequence>=f.sessionEvents.sequence?m:[...m,f.sessionEvents]),error:a}),[e]);let c=ne(()=>rs(s),[s]),p=s.length-1,d=i<0||i>p?p:i,$=i<0,h=s.slice(0,d+1),u=s.length?Date.parse(s[0].time):0,g=s.length?s[d].sequence:0,_=H(null);return R(()=>{!$&&_.current&&_.current.scrollIntoView({block:"nearest"})},[d,$]),o`<${D} title=${`Timeline \xB7 ${e}`}>
    <p class="muted"><a href=${"#/chat/"+e}>Chat of this session</a> · ${s.length} events${$?" \xB7 following live":""}</p>
    <${v} error=${r} />
    ${!s.length&&!r?o`<${T} what="the log" />`:null}
    ${s.length?o`<div class="scrub">
      <label for="scrub">Show the log up to sequence <strong id="scrub-seq">${g}</strong> (event ${d+1} of ${s.length})</label>
      <input id="scrub" type="range" min="0" max=${p} step="1" value=${d} aria-valuetext=${`sequence ${g}, event ${d+1} of ${s.length}`}
        onInput=${f=>{let m=Number(f.target.value);l(m===p?-1:m)}} />
      <div class="row">
        <${le} id="replay-cmd" label="Replay from here in a terminal" value=${`contrail replay session ${e} --from ${g}`} />
        <button type="button" disabled=${$} onClick=${()=>l(-1)}>Follow live</button>
      </div>
    </div>`:null}
    <div class="split">
      <ol class="events" aria-label="Events">
        ${h.map((f,m)=>o`<${is} e=${f} i=${m} start=${u} prev=${m?Date.parse(s[m-1].time):u}
          duration=${c.get(f.sequence)} current=${m===d&&!$} refEl=${m===d?_:null} onPick=${()=>l(m===p?-1:m)} />`)}
      </ol>
      <aside class="side" aria-label="The session at this sequence">
        <h2>The session at sequence ${g}</h2>
        <${cs} evs=${h} />
        ${d<p?o`<p class="muted">${p-d} later event${p-d===1?"":"s"} hidden.</p>`:null}
      </aside>
    </div>
  <//>`}function rs(e){let t=new Map,s=new Map;for(let n of e){if(n.type!=="session.agent_step")continue;let r=n.data||{},a=[r.reply_id,r.path||r.agent,r.name].join("|");(r.kind==="ask_func"||r.kind==="ask_agent")&&t.set(a,Date.parse(n.time)),(r.kind==="func_says"||r.kind==="agent_says")&&t.has(a)&&(s.set(n.sequence,Date.parse(n.time)-t.get(a)),t.delete(a))}return s}function is({e,i:t,start:s,prev:n,duration:r,current:a,refEl:i,onPick:l}){let c=Date.parse(e.time),p=e.data||{};return o`<li class=${"event"+(a?" current":"")} ref=${i} data-type=${e.type} data-kind=${p.kind||void 0} data-sequence=${e.sequence}>
    <div class="ev-head">
      <button type="button" class="seq" onClick=${l} aria-label=${`Scrub to sequence ${e.sequence}`}>#${e.sequence}</button>
      <span class="offset" title=${b(e.time)}>${ve(c-s)}</span>
      ${t?o`<span class="muted">(${ve(c-n)} after the previous)</span>`:null}
      <span class="type">${e.type}</span>
    </div>
    <div class="ev-body"><${ls} e=${e} duration=${r} /></div>
    <details><summary>All fields</summary><${j} data=${{...p,_event_id:e.id,_version:e.version,_actor:e.actor,_correlation:e.correlationId,_causation:e.causationId}} /></details>
  </li>`}var z=e=>e.path||e.agent||"";function ls({e,duration:t}){let s=e.data||{},n=t!==void 0?o` <span class="badge">took ${ve(t).slice(1)}</span>`:null,r=s.call?o` <span class="badge" title="the model call that produced this step">model call ${s.call}</span>`:null;switch(e.type){case"session.created":return o`<p>Session opened; front agent <code>${s.frontend_agent_handle||s.frontend_agent_id}</code>.</p>`;case"session.message_posted":return o`<p><strong>${s.sent_by}</strong> asks: ${s.text}</p>${Et(s.embeds)}`;case"session.query_dispatched":return o`<p>Query <code>${s.message_id}</code> handed to agent <code>${s.agent_handle||s.agent_id}</code>; its reply will be <code>${s.reply_id}</code>.</p>`;case"session.routed":return o`<div>
        <p>${s.path?o`<code>${s.path}</code> `:null}routed “${s.query}” → ${s.chosen?o`<strong>${s.chosen}</strong>`:o`<em>no agent fits</em> (the front agent answers)`}</p>
        <table class="scores"><caption class="sr-only">Candidates and their scores</caption>
          <thead><tr><th scope="col">Candidate</th><th scope="col">Score</th></tr></thead>
          <tbody>${(s.matches||[]).map(a=>o`<tr class=${a.handle===s.chosen?"chosen":""}><td>${a.handle}${a.handle===s.chosen?" (chosen)":""}</td><td><${ke} score=${a.score} fits=${a.handle===s.chosen} /></td></tr>`)}</tbody>
        </table></div>`;case"session.agent_step":switch(s.kind){case"thought":return o`<p class="step thought"><code>${z(s)}</code> thinks: ${s.text}${r}</p>`;case"ask_func":return o`<p class="step"><code>${z(s)}</code> calls func <strong>${s.name}</strong> with <code class="args">${s.text}</code>${r}</p>`;case"func_says":return o`<p class="step"><code>${z(s)}</code> ← func <strong>${s.name}</strong> says: <code class="args">${s.text}</code>${n}</p>`;case"ask_agent":return o`<p class="step"><code>${z(s)}</code> asks agent <strong>${s.name}</strong>: ${s.text}${r}</p>`;case"agent_says":return o`<p class="step"><code>${z(s)}</code> ← agent <strong>${s.name}</strong> says: ${s.text}${n}</p>`;case"answer":return o`<p class="step answer"><code>${z(s)}</code> answers: ${s.text}${r}</p>`;case"failed":return o`<p class="step failed"><code>${z(s)}</code> failed: ${s.text}</p>`}return o`<p class="step"><code>${z(s)}</code> ${s.kind}${s.name?` [${s.name}]`:""}: ${s.text}${r}</p>`;case"session.reply_posted":return o`<p><strong>${s.sent_by}</strong> replies: ${s.text}</p>${Et(s.embeds)}`;case"session.reply_failed":return o`<p class="failed">No reply from <strong>${s.sent_by}</strong>: ${s.error}</p>`;case"session.deleted":return o`<p>Session deleted.</p>`}return o`<${j} data=${s} />`}function Et(e){let t=Object.keys(e||{});return t.length?o`<p class="muted">Embeds: ${t.map(s=>o`<code>#${s}</code> (${e[s].content_type}) `)}</p>`:null}function cs({evs:e}){let t=[],s="";for(let n of e){let r=n.data||{};n.type==="session.message_posted"&&t.push({id:r.message_id,who:r.sent_by,text:r.text,cls:"query"}),n.type==="session.reply_posted"&&t.push({id:r.message_id,who:r.sent_by,text:r.text,cls:"response"}),n.type==="session.reply_failed"&&t.push({id:r.message_id,who:r.sent_by,text:r.error,cls:"error"}),n.type==="session.query_dispatched"&&(s=r.agent_handle||r.agent_id),(n.type==="session.reply_posted"||n.type==="session.reply_failed")&&(s="")}return o`<ol class="messages compact">
    ${t.map(n=>o`<li class=${"msg "+n.cls}><div class="meta"><strong>${n.who}</strong></div><div class="body">${n.text}</div></li>`)}
    ${s?o`<li class="msg response muted">${s} is working on a reply…</li>`:null}
    ${t.length?null:o`<li class="muted">No messages yet.</li>`}
  </ol>`}function Nt(){let e=`${location.origin}/mcp`,t=JSON.stringify({mcpServers:{contrail:{type:"http",url:e,headers:{Authorization:"Bearer <your Contrail API key>"}}}},null,2);return o`<section class="card" aria-labelledby="mcp-h">
    <h2 id="mcp-h">Connect a desktop client (MCP)</h2>
    <p>Your agents (<code>ask_&lt;handle&gt;</code>), Julep tasks and vector store searches are MCP tools at <code id="mcp-url">${e}</code>. Add this to your client's MCP configuration:</p>
    <pre class="text" id="mcp-config">${t}</pre>
  </section>`}var It="agentId handle name description kind published queries queryUrl funcUrl moreInfoUrl model created modified owner { username }";function Pt({args:e}){let t=e[0]||"",{key:s}=x(),n=q(()=>O(s,`{ allAgents(first: 1000) { ${It} } }`),[s]),[r,a]=y("");return o`<${D} title=${t?`Agent \xB7 ${t}`:"Agents"}>
    <div class="split">
      <div class="main-col">
        ${t?o`<${hs} key=${t} handle=${t} onTry=${a} onChanged=${n.reload} />`:o`<${ds} list=${n} />`}
      </div>
      <aside class="side">
        <${_s} query=${r} setQuery=${a} />
        <${fs} onDone=${n.reload} />
        <${Nt} />
      </aside>
    </div>
  <//>`}function ds({list:e}){return e.error?o`<${v} error=${e.error} />`:e.data?o`<table class="grid">
    <caption>Agents you may use: built-ins, yours, and published ones</caption>
    <thead><tr><th scope="col">Handle</th><th scope="col">Kind</th><th scope="col">Owner</th><th scope="col">Sample queries</th><th scope="col">Description</th></tr></thead>
    <tbody>${e.data.allAgents.map(t=>o`<tr>
      <td><a href=${"#/agents/"+t.handle}>${t.handle}</a>${t.published?o` <span class="badge">published</span>`:null}</td>
      <td>${t.kind}</td><td>${t.owner?t.owner.username:o`<span class="muted">built-in</span>`}</td>
      <td>${t.queries.length||(t.owner?o`<span class="warn" title="The router never picks an agent without sample queries; ask it by handle">0 · not routed to</span>`:"0")}</td><td>${t.description||t.name||""}</td></tr>`)}</tbody>
  </table>`:o`<${T} what="agents" />`}var us=e=>[...new Set((e||[]).flatMap(t=>[...t.matchAll(/Ask Func\[([^\]]+)\]/g)].map(s=>s[1])))];function ps(e){let t=/^(Q|Thought|Ask Func\[[^\]]*\]|Func\[[^\]]*\] says|Ask Agent\[[^\]]*\]|Agent\[[^\]]*\] says|A):/.exec(e);return t?t[1]==="Q"?"l-q":t[1]==="A"?"l-a":t[1]==="Thought"?"l-thought":t[1].endsWith("says")?"l-says":"l-ask":""}function hs({handle:e,onTry:t,onChanged:s}){let{key:n,me:r}=x(),a=q(()=>O(n,`query($h: String!) { agentByHandle(handle: $h) { ${It} basePrompt fewShots } }`,{h:e}),[n,e]),i=F(async()=>(await O(n,"mutation($h: String!) { refreshAgent(handle: $h) { agent { handle } } }",{h:e}),a.reload(),s(),"Read its description again.")),l=F(async()=>{await O(n,"mutation($h: String!) { deleteAgent(handle: $h) { agent { handle } } }",{h:e}),s(),location.hash="#/agents"});if(a.error)return o`<${v} error=${a.error} />`;if(!a.data)return o`<${T} what=${e} />`;let c=a.data.agentByHandle;if(!c)return o`<p role="alert" class="error">No agent ${e} that your key may use. <a href="#/agents">All agents</a></p>`;let p=c.owner&&c.owner.username===r.username,d=us(c.fewShots);return o`<article class="agent">
    <p><a href="#/agents">← All agents</a></p>
    <h2>${c.name||c.handle} <span class="badge">${c.kind}</span>${c.published?o` <span class="badge">published</span>`:null}</h2>
    ${c.description?o`<p>${c.description}</p>`:null}
    <dl class="kv">
      <div><dt>Handle</dt><dd><code>${c.handle}</code> (<code>${c.agentId}</code>)</dd></div>
      <div><dt>Owner</dt><dd>${c.owner?c.owner.username:"built-in"}</dd></div>
      ${c.funcUrl?o`<div><dt>Funcs URL</dt><dd><code>${c.funcUrl}</code></dd></div>`:null}
      ${c.queryUrl?o`<div><dt>Query URL</dt><dd><code>${c.queryUrl}</code></dd></div>`:null}
      <div><dt>Model</dt><dd>${c.model||o`<span class="muted">the platform's default</span>`}</dd></div>
      <div><dt>Modified</dt><dd>${b(c.modified)}</dd></div>
    </dl>
    ${p?o`<div class="row">
      <button type="button" onClick=${()=>i.run()} disabled=${i.busy}>Refresh from its URL</button>
      <${Ge} label="Delete agent" confirm=${`Really delete ${c.handle}?`} onConfirm=${()=>l.run()} busy=${l.busy} />
      <span aria-live="polite" class="muted">${i.done||""}</span>
    </div><${v} error=${i.error||l.error} />`:null}
    <h3>Sample queries</h3>
    ${c.queries.length?o`<ul class="queries">${c.queries.map($=>o`<li>${$} <button type="button" class="small" onClick=${()=>t($)}>Try routing</button></li>`)}</ul>`:o`<p class="muted">None: the router never picks this agent.</p>`}
    <h3>Funcs</h3>
    ${d.length?o`<ul>${d.map($=>o`<li><code>${$}</code></li>`)}</ul>`:o`<p class="muted">Its few-shots call no func.</p>`}
    <h3>Base prompt</h3>
    ${c.basePrompt?o`<pre class="text">${c.basePrompt}</pre>`:o`<p class="muted">None.</p>`}
    <h3>Few-shots</h3>
    ${(c.fewShots||[]).length?(c.fewShots||[]).map(($,h)=>o`<figure class="fewshot"><figcaption>Example ${h+1}</figcaption>
      <pre>${$.split(`
`).map(u=>o`<span class=${ps(u)}>${u}</span>${`
`}`)}</pre></figure>`):o`<p class="muted">None.</p>`}
  </article>`}function Ge({label:e,confirm:t,onConfirm:s,busy:n}){let[r,a]=y(!1);return r?o`<span class="confirm" role="group" aria-label=${t}>${t}
    <button type="button" class="danger" autofocus onClick=${()=>{a(!1),s()}}>Yes</button>
    <button type="button" onClick=${()=>a(!1)}>No</button></span>`:o`<button type="button" class="danger" onClick=${()=>a(!0)} disabled=${n}>${e}</button>`}function _s({query:e,setQuery:t}){let{key:s}=x(),n=F(async a=>(await O(s,"query($q: String!) { route(query: $q, first: 5) { agent { handle } score fits } }",{q:a})).route);return o`<section class="card" aria-labelledby="route-h">
    <h2 id="route-h">Try routing</h2>
    <form class="stack" onSubmit=${a=>{a.preventDefault(),e.trim()&&n.run(e.trim())}}>
      <label for="route-q">A question</label>
      <input id="route-q" value=${e} onInput=${a=>t(a.target.value)} placeholder="Generate a random number between 1 and 10" />
      <button type="submit" disabled=${n.busy}>Route</button>
    </form>
    <${v} error=${n.error} />
    ${n.done?o`<table class="scores" id="route-result"><caption>What the router would pick, best first</caption>
      <thead><tr><th scope="col">Agent</th><th scope="col">Score</th></tr></thead>
      <tbody>${n.done.map(a=>o`<tr data-agent=${a.agent.handle}><td><a href=${"#/agents/"+a.agent.handle}>${a.agent.handle}</a></td><td><${ke} score=${a.score} fits=${a.fits} /></td></tr>`)}</tbody>
      </table>${n.done.length?null:o`<p class="muted">No agent has sample queries to compare with.</p>`}`:null}
  </section>`}var $s="[a-z0-9][a-z0-9_\\-]*";function fs({onDone:e}){let{key:t}=x(),[s,n]=y({handle:"",url:"",kind:"codeshot",published:!1}),r=l=>c=>n({...s,[l]:c.target.type==="checkbox"?c.target.checked:c.target.value}),a=F(async()=>{let l={handle:s.handle.trim(),published:s.published};s.kind==="standalone"?l.queryUrl=s.url.trim():l.funcUrl=s.url.trim();let c=await Be(t,"mutation($d: AgentInput!) { createAgent(agentData: $d) { agent { handle kind queries } } }",{d:l});return e(),{...c.data.createAgent.agent,warnings:c.extensions.warnings||[]}}),i=a.done;return o`<section class="card" aria-labelledby="reg-h">
    <h2 id="reg-h">Register an agent by URL</h2>
    <form class="stack" onSubmit=${l=>{l.preventDefault(),a.run()}}>
      <label for="reg-handle">Handle</label>
      <input id="reg-handle" required pattern=${$s} title="lower-case letters, digits, - and _" value=${s.handle} onInput=${r("handle")} />
      <label for="reg-url">URL</label>
      <input id="reg-url" type="url" required value=${s.url} onInput=${r("url")} placeholder="http://127.0.0.1:8181/" />
      <fieldset><legend>What answers at the URL</legend>
        <label><input type="radio" name="reg-kind" value="codeshot" checked=${s.kind==="codeshot"} onChange=${r("kind")} /> A Code Shot agent: its description at GET /, its funcs</label>
        <label><input type="radio" name="reg-kind" value="standalone" checked=${s.kind==="standalone"} onChange=${r("kind")} /> A standalone agent: it answers queries itself</label>
      </fieldset>
      <label><input type="checkbox" checked=${s.published} onChange=${r("published")} /> Published (every account may use it)</label>
      <button type="submit" disabled=${a.busy}>${a.busy?"Reading its description\u2026":"Register"}</button>
    </form>
    <${v} error=${a.error} />
    ${i?o`<div role="status" id="reg-done">
      <p>Registered <a href=${"#/agents/"+i.handle}>${i.handle}</a> (${i.kind}, ${i.queries.length} sample ${i.queries.length===1?"query":"queries"}).</p>
      ${i.warnings.map(l=>o`<p class="warning">${l}</p>`)}
      ${i.queries.length?null:o`<p class="warning" id="reg-unroutable">The router never picks an agent without sample queries:
        ${i.warnings.length?" once its URL answers, use Refresh on its page to read its description.":" ask it by handle, or give it some in its description at GET / and use Refresh on its page."}</p>`}
    </div>`:null}
  </section>`}function Rt({args:e}){let{key:t}=x(),s=e[0]==="thread"?e[1]:"",n=q(async()=>{let[a,i]=await Promise.all([w(t,"GET","/v1/assistants?limit=100"),w(t,"GET","/v1/threads?limit=100")]);return{assistants:a.data,threads:i.data}},[t]),r=a=>(n.data&&n.data.assistants.find(i=>i.id===a)||{}).name||a;return o`<${D} title=${s?`Thread \xB7 ${s}`:"Assistants"}>
    <${v} error=${n.error} />
    <div class="split">
      <aside class="side" aria-label="Assistants and threads">
        <h2>Assistants</h2>
        ${n.data?o`<ul class="plain">${n.data.assistants.map(a=>o`<li><strong>${a.name||a.id}</strong> <span class="muted">${a.model}</span>
          <details><summary>Details</summary><${j} data=${{id:a.id,instructions:a.instructions,tools:a.tools.map(i=>i.type),created:b(a.created_at)}} /></details></li>`)}
          ${n.data.assistants.length?null:o`<li class="muted">None yet: create one with any OpenAI SDK pointed at /v1.</li>`}</ul>`:o`<${T} />`}
        <h2>Threads</h2>
        ${n.data?o`<ul class="sessions">${n.data.threads.map(a=>o`<li class=${a.id===s?"current":""}>
          <a href=${"#/assistants/thread/"+a.id} aria-current=${a.id===s?"page":void 0}>${a.id}</a> <span class="muted">${b(a.created_at)}</span></li>`)}
          ${n.data.threads.length?null:o`<li class="muted">No threads yet.</li>`}</ul>`:null}
      </aside>
      <div class="main-col">
        ${s?o`<${ms} key=${s} id=${s} name=${r} />`:o`<p>Pick a thread to see its messages and runs.</p>`}
      </div>
    </div>
  <//>`}function ms({id:e,name:t}){let{key:s}=x(),n=q(async()=>{let r="/v1/threads/"+encodeURIComponent(e),[a,i]=await Promise.all([w(s,"GET",r+"/messages?order=asc&limit=100"),w(s,"GET",r+"/runs?order=asc&limit=100")]);return{messages:a.data,runs:i.data}},[s,e]);return n.error?o`<${v} error=${n.error} />`:n.data?o`<div>
    <p class="row"><button type="button" onClick=${n.reload}>Refresh</button></p>
    <h2>Messages</h2>
    <ol class="messages">${n.data.messages.map(r=>o`<li class=${"msg "+(r.role==="user"?"query":"response")}>
      <div class="meta"><strong>${r.role==="assistant"?t(r.assistant_id):r.role}</strong> · ${b(r.created_at)} · ${r.status}${r.run_id?o` · run <code>${r.run_id}</code>`:null}</div>
      <div class="body">${r.content.map(a=>a.type==="text"?a.text.value:o`<${j} data=${a} />`)}</div></li>`)}
      ${n.data.messages.length?null:o`<li class="muted">No messages.</li>`}</ol>
    <h2>Runs</h2>
    ${n.data.runs.map(r=>o`<${ys} key=${r.id} run=${r} thread=${e} name=${t} />`)}
    ${n.data.runs.length?null:o`<p class="muted">No runs.</p>`}
  </div>`:o`<${T} what="the thread" />`}function gs(e){let t=[["queued",e.created_at]];return e.started_at&&t.push(["in_progress",e.started_at]),e.status==="requires_action"&&t.push(["requires_action",null]),e.status==="cancelling"&&t.push(["cancelling",null]),e.cancelled_at&&t.push(["cancelled",e.cancelled_at]),e.failed_at&&t.push(["failed",e.failed_at]),e.completed_at&&t.push(["completed",e.completed_at]),e.status==="expired"&&t.push(["expired",e.expires_at]),e.status==="incomplete"&&t.push(["incomplete",e.completed_at]),t}function ys({run:e,thread:t,name:s}){let{key:n}=x(),[r,a]=y(!1),i=q(()=>r?w(n,"GET",`/v1/threads/${encodeURIComponent(t)}/runs/${encodeURIComponent(e.id)}/steps?order=asc&limit=100`):Promise.resolve(null),[n,t,e.id,r]);return o`<article class="card run">
    <h3><code>${e.id}</code> <span class=${"badge status-"+e.status}>${e.status}</span></h3>
    <p class="muted">${s(e.assistant_id)} · model ${e.model}${e.usage?` \xB7 ${e.usage.total_tokens} tokens`:""}</p>
    ${e.last_error?o`<p class="error">${e.last_error.code}: ${e.last_error.message}</p>`:null}
    <h4>Status history</h4>
    <ol class="history">${gs(e).map(([l,c])=>o`<li><span class=${"badge status-"+l}>${l}</span> ${c?b(c):o`<span class="muted">now</span>`}</li>`)}</ol>
    <button type="button" aria-expanded=${r} onClick=${()=>a(!r)}>${r?"Hide steps":"Show steps"}</button>
    ${r&&i.error?o`<${v} error=${i.error} />`:null}
    ${r&&i.data?o`<ol class="steps">${i.data.data.map(l=>o`<li>
      <strong>${l.type==="tool_calls"?"Tool calls":"Message"}</strong> <span class=${"badge status-"+l.status}>${l.status}</span>
      <span class="muted">${b(l.created_at)}${l.completed_at?` \u2192 ${b(l.completed_at)}`:""}</span>
      <${bs} d=${l.step_details} />
      ${l.last_error?o`<p class="error">${l.last_error.message}</p>`:null}
    </li>`)}${i.data.data.length?null:o`<li class="muted">No steps.</li>`}</ol>`:null}
  </article>`}function bs({d:e}){return e?e.type==="message_creation"?o`<p class="muted">wrote message <code>${e.message_creation.message_id}</code></p>`:e.type==="tool_calls"?o`<ul>${e.tool_calls.map(t=>o`<li>${t.type==="function"?o`<code>${t.function.name}(${t.function.arguments})</code> → ${t.function.output===null||t.function.output===void 0?o`<span class="muted">waiting for its output</span>`:o`<code>${t.function.output}</code>`}`:o`<${j} data=${t} />`}</li>`)}</ul>`:o`<${j} data=${e} />`:null}function Mt({args:e}){let{me:t}=x(),s=e[0]==="account"?e[1]:"";return t.admin?o`<${D} title="Operations">
    <div class="grid2">
      <${vs} />
      <${ks} />
    </div>
    <${ws} selected=${s} />
    ${s?o`<${Dt} key=${s} account=${s} own=${s===t.account_id} />`:null}
    <${xs} />
  <//>`:o`<${D} title="Operations">
      <p>Operations (accounts, usage, projections, the dead-letter queue) need an admin key. You are signed
        in as <strong>${t.username}</strong> (account <code>${t.account_id}</code>). Your own keys:</p>
      <${Dt} account=${t.account_id} own=${!0} />
    <//>`}function vs(){let e=q(ye,[]);return o`<section class="card" aria-labelledby="health-h">
    <h2 id="health-h">Node health</h2>
    ${e.data?o`<p id="node-ready" class=${e.data.ready?"ok":"error"}>${e.data.ready?"Ready":"Not ready"}${e.data.status.reason?`: ${e.data.status.reason}`:""}</p>`:o`<${T} />`}
    ${e.data&&e.data.status.code_interpreter?o`<p id="code-interpreter" class=${e.data.status.code_interpreter.available?"ok":"warning"}>
      code_interpreter: ${e.data.status.code_interpreter.available?"available":`unavailable: ${e.data.status.code_interpreter.reason||"no reason given"}`}</p>`:null}
    <${v} error=${e.error} />
    <button type="button" onClick=${e.reload}>Check again</button>
  </section>`}function ks(){let{key:e}=x(),t=q(()=>w(e,"GET","/admin/projections"),[e]);return o`<section class="card" aria-labelledby="proj-h">
    <h2 id="proj-h">Projections</h2>
    <${v} error=${t.error} />
    ${t.data?o`<table class="grid" id="projections"><caption class="sr-only">Read models and how far behind the log they are</caption>
      <thead><tr><th scope="col">Read model</th><th scope="col">Applied up to</th><th scope="col">Lag (events)</th><th scope="col">Generation</th><th scope="col">Leader</th></tr></thead>
      <tbody>${t.data.projections.map(s=>o`<tr><td>${s.name}</td><td>${s.applied_sequence}</td>
        <td class=${s.pending?"warn":"ok"}>${s.pending}</td><td>${s.generation}</td><td>${s.leader||o`<span class="muted">none</span>`}</td></tr>`)}</tbody>
    </table>`:o`<${T} />`}
    <button type="button" onClick=${t.reload}>Refresh</button>
  </section>`}function ws({selected:e}){let{key:t}=x(),s=q(async()=>{let[i,l]=await Promise.all([w(t,"GET","/admin/accounts"),w(t,"GET","/admin/usage")]),c=new Map(l.accounts.map(p=>[p.account_id,p]));return{day:l.day,accounts:i.accounts.map(p=>({...p,usage:c.get(p.id)}))}},[t]),[n,r]=y({name:"",limit:""}),a=F(async()=>{let i={name:n.name.trim()};n.limit&&(i.daily_query_limit=Number(n.limit));let l=await w(t,"POST","/admin/accounts",i);return r({name:"",limit:""}),s.reload(),l});return o`<section class="card" aria-labelledby="acct-h">
    <h2 id="acct-h">Accounts and usage${s.data?` (${s.data.day}, UTC)`:""}</h2>
    <${v} error=${s.error} />
    ${s.data?o`<table class="grid" id="accounts"><caption class="sr-only">Accounts, their daily query use against their quota, and their keys</caption>
      <thead><tr><th scope="col">Account</th><th scope="col">Queries today / quota</th><th scope="col">Requests per minute per key</th><th scope="col">Keys</th><th scope="col">Created</th></tr></thead>
      <tbody>${s.data.accounts.map(i=>{let l=i.usage||{},c=i.keys.filter(p=>!p.revoked_at).length;return o`<tr class=${i.id===e?"current":""}><td><a href=${"#/operations/account/"+i.id} aria-current=${i.id===e?"true":void 0}>${i.name}</a>${i.admin?o` <span class="badge">admin</span>`:null} <code class="muted">${i.id}</code></td>
          <td><meter min="0" max=${l.daily_query_limit||1} value=${l.daily_used_queries||0} aria-label=${`${i.name}: ${l.daily_used_queries} of ${l.daily_query_limit} queries today`}></meter> ${l.daily_used_queries} / ${l.daily_query_limit}</td>
          <td>${i.requests_per_minute||o`<span class="muted">default</span>`}</td><td>${c}${i.keys.length>c?o` <span class="muted">(+${i.keys.length-c} revoked)</span>`:null}</td><td>${b(i.created_at)}</td></tr>`})}</tbody></table>`:o`<${T} what="accounts" />`}
    <form class="inline" onSubmit=${i=>{i.preventDefault(),a.run()}}>
      <label for="new-account">New account</label>
      <input id="new-account" required value=${n.name} onInput=${i=>r({...n,name:i.target.value})} />
      <label for="new-limit">Daily query quota</label>
      <input id="new-limit" type="number" min="1" placeholder="default" value=${n.limit} onInput=${i=>r({...n,limit:i.target.value})} />
      <button type="submit" disabled=${a.busy}>Create account</button>
    </form>
    <${v} error=${a.error} />
    ${a.done?o`<div role="status"><p>Created account <code>${a.done.account_id}</code>. Its key is shown this once:</p>
      <${le} id="new-account-key" label="API key of the new account" value=${a.done.key} /></div>`:null}
  </section>`}function Dt({account:e,own:t}){let{key:s,me:n}=x(),r=t?"":"?account="+encodeURIComponent(e),a=q(()=>w(s,"GET","/admin/keys"+r),[s,e]),[i,l]=y(""),c=F(async()=>{let d=await w(s,"POST","/admin/keys"+r,{name:i.trim()});return l(""),a.reload(),d}),p=F(async d=>(await w(s,"DELETE","/admin/keys/"+encodeURIComponent(d)+r),a.reload(),c.done&&c.done.key_id===d?(c.reset(),`Revoked ${d}; its value is cleared from this page.`):`Revoked ${d}.`));return o`<section class="card" aria-labelledby="keys-h">
    <h2 id="keys-h">Keys of ${t?"your account":a.data&&a.data.name?a.data.name:o`<code>${e}</code>`}</h2>
    <${v} error=${a.error} />
    ${a.data?o`<table class="grid" id="keys"><caption class="sr-only">Keys (stored as hashes: only a hint of each is known)</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
      <tbody>${a.data.keys.map(d=>o`<tr data-key-id=${d.id}><td><code>${d.id}</code> <span class="muted">${d.hint}</span></td><td>${d.name||""}</td><td>${b(d.created_at)}</td>
        <td>${d.revoked_at?o`<span class="badge">revoked ${b(d.revoked_at)}</span>`:d.id===n.key_id?o`<span class="muted">this console's key</span>`:o`<${Ge} label=${"Revoke "+d.id} confirm=${`Revoke ${d.id}? Clients using it stop working.`} onConfirm=${()=>p.run(d.id)} busy=${p.busy} />`}</td></tr>`)}</tbody>
    </table>`:o`<${T} what="keys" />`}
    <p aria-live="polite" class="muted">${p.done||""}</p>
    <${v} error=${p.error} />
    <form class="inline" onSubmit=${d=>{d.preventDefault(),c.run()}}>
      <label for="new-key">New key named</label>
      <input id="new-key" value=${i} onInput=${d=>l(d.target.value)} placeholder="laptop" />
      <button type="submit" disabled=${c.busy}>Issue key</button>
    </form>
    <${v} error=${c.error} />
    ${c.done?o`<div role="status"><${le} id="new-key-value" label=${`Key ${c.done.key_id} (shown this once)`} value=${c.done.key} /></div>`:null}
  </section>`}function xs(){let{key:e}=x(),t=q(()=>w(e,"GET","/admin/dlq"),[e]),s=F(async n=>{let r=await w(e,"POST",`/admin/dlq/${n}/redrive`);return t.reload(),`Handed event ${r.redriven.event_seq} back to ${r.redriven.handler}.`});return o`<section class="card" aria-labelledby="dlq-h">
    <h2 id="dlq-h">Dead-letter queue</h2>
    <p class="muted">Events a handler gave up on after its retries. Re-drive one when its cause is fixed.</p>
    <${v} error=${t.error||s.error} />
    <p aria-live="polite">${s.done||""}</p>
    ${t.data?t.data.dead_letters.length?o`<table class="grid" id="dlq"><caption class="sr-only">Dead letters</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Handler</th><th scope="col">Event</th><th scope="col">Why</th><th scope="col">Deliveries</th><th scope="col">When</th><th scope="col"></th></tr></thead>
      <tbody>${t.data.dead_letters.map(n=>o`<tr><td>${n.seq}</td><td>${n.handler}</td><td>${n.event_type} <code class="muted">${n.aggregate}</code> (seq ${n.event_seq})</td>
        <td>${n.reason}</td><td>${n.deliveries}</td><td>${b(n.poisoned_at)}</td>
        <td><button type="button" onClick=${()=>s.run(n.seq)} disabled=${s.busy}>Re-drive ${n.seq}</button></td></tr>`)}</tbody>
    </table>`:o`<p id="dlq-empty">Empty: every handler kept up.</p>`:o`<${T} />`}
    <button type="button" onClick=${t.reload}>Refresh</button>
  </section>`}var ce="/julep",te=encodeURIComponent,Q=async(e,t)=>(await w(e,"GET",ce+t+(t.includes("?")?"&":"?")+"limit=100")).items||[];function Lt({args:e}){let[t,s]=e,r={agent:Ts,user:Cs,task:qs,execution:Es}[t];return o`<${D} title=${r&&s?{agent:"Julep agent",user:"Julep user",task:"Julep task",execution:"Julep execution"}[t]:"Julep"}>
    <div class="split">
      <div class="main-col">
        ${r&&s?o`<p><a href="#/julep">← Julep</a></p><${r} key=${t+s} id=${s} />`:o`<${Ss} />`}
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
  <//>`}function Ss(){let{key:e}=x(),t=q(async()=>{let[s,n]=await Promise.all([Q(e,"/agents"),Q(e,"/users")]);return{agents:s,users:n}},[e]);return t.error?o`<${v} error=${t.error} />`:t.data?o`<div>
    <h2>Agents</h2>
    ${t.data.agents.length?o`<table class="grid" id="julep-agents"><caption class="sr-only">Julep agents</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Model</th><th scope="col">About</th><th scope="col">Created</th></tr></thead>
      <tbody>${t.data.agents.map(s=>o`<tr data-id=${s.id}><td><a href=${"#/julep/agent/"+s.id}>${s.name||s.id}</a></td>
        <td>${s.model||o`<span class="muted">default</span>`}</td><td>${s.about||""}</td><td>${b(s.created_at)}</td></tr>`)}</tbody>
    </table>`:o`<p class="muted">No Julep agents yet.</p>`}
    <h2>Users</h2>
    ${t.data.users.length?o`<table class="grid" id="julep-users"><caption class="sr-only">Julep users</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">About</th><th scope="col">Created</th></tr></thead>
      <tbody>${t.data.users.map(s=>o`<tr data-id=${s.id}><td><a href=${"#/julep/user/"+s.id}>${s.name||s.id}</a></td>
        <td>${s.about||""}</td><td>${b(s.created_at)}</td></tr>`)}</tbody>
    </table>`:o`<p class="muted">No Julep users yet.</p>`}
  </div>`:o`<${T} what="Julep" />`}function Ut({docs:e}){return e.length?o`<ul class="plain docs">${e.map(t=>o`<li><strong>${t.title||t.id}</strong>
    <span class="muted">${t.modality||"text"} · ${b(t.created_at)}</span>
    <details><summary>Content</summary><${V} v=${Array.isArray(t.content)?t.content.join(`

`):t.content} /></details></li>`)}</ul>`:o`<p class="muted">No docs.</p>`}function Ts({id:e}){let{key:t}=x(),s=q(async()=>{let l="/agents/"+te(e),[c,p,d,$]=await Promise.all([w(t,"GET",ce+l),Q(t,l+"/tools"),Q(t,l+"/docs"),Q(t,l+"/tasks")]);return{agent:c,tools:p,docs:d,tasks:$}},[t,e]);if(s.error)return o`<${v} error=${s.error} />`;if(!s.data)return o`<${T} what="the agent" />`;let{agent:n,tools:r,docs:a,tasks:i}=s.data;return o`<article class="julep-agent">
    <h2>${n.name||n.id}</h2>
    ${n.about?o`<p>${n.about}</p>`:null}
    <dl class="kv">
      <div><dt>ID</dt><dd><code class="id">${n.id}</code></dd></div>
      <div><dt>Model</dt><dd>${n.model||o`<span class="muted">the platform's default</span>`}</dd></div>
      <div><dt>Instructions</dt><dd><${V} v=${n.instructions} /></dd></div>
      <div><dt>Updated</dt><dd>${b(n.updated_at)}</dd></div>
    </dl>
    <h3>Tasks</h3>
    ${i.length?o`<ul class="plain" id="julep-tasks">${i.map(l=>o`<li><a href=${"#/julep/task/"+l.id}>${l.name||l.id}</a>
      <span class="muted">${(l.main||[]).length} steps · ${b(l.created_at)}</span></li>`)}</ul>`:o`<p class="muted">No tasks.</p>`}
    <h3>Tools</h3>
    ${r.length?o`<ul class="plain">${r.map(l=>o`<li><code>${l.name}</code> <span class="badge">${l.type}</span>
      ${l.description?o`<span class="muted">${l.description}</span>`:null}</li>`)}</ul>`:o`<p class="muted">No tools.</p>`}
    <h3>Docs</h3>
    <${Ut} docs=${a} />
  </article>`}function Cs({id:e}){let{key:t}=x(),s=q(async()=>{let[r,a]=await Promise.all([w(t,"GET",ce+"/users/"+te(e)),Q(t,"/users/"+te(e)+"/docs")]);return{user:r,docs:a}},[t,e]);if(s.error)return o`<${v} error=${s.error} />`;if(!s.data)return o`<${T} what="the user" />`;let n=s.data.user;return o`<article>
    <h2>${n.name||n.id}</h2>
    ${n.about?o`<p>${n.about}</p>`:null}
    <dl class="kv"><div><dt>ID</dt><dd><code class="id">${n.id}</code></dd></div><div><dt>Created</dt><dd>${b(n.created_at)}</dd></div></dl>
    <h3>Docs</h3>
    <${Ut} docs=${s.data.docs} />
  </article>`}function qs({id:e}){let{key:t}=x(),s=q(async()=>{let[r,a]=await Promise.all([w(t,"GET",ce+"/tasks/"+te(e)),Q(t,"/tasks/"+te(e)+"/executions")]);return{task:r,executions:a}},[t,e]);if(s.error)return o`<${v} error=${s.error} />`;if(!s.data)return o`<${T} what="the task" />`;let n=s.data.task;return o`<article>
    <h2>${n.name||n.id}</h2>
    ${n.description?o`<p>${n.description}</p>`:null}
    <p class="muted">Agent <a href=${"#/julep/agent/"+n.agent_id}><code class="id">${n.agent_id}</code></a> · ${b(n.created_at)}</p>
    <h3>Executions</h3>
    ${s.data.executions.length?o`<table class="grid" id="julep-executions"><caption class="sr-only">Executions of this task</caption>
      <thead><tr><th scope="col">Execution</th><th scope="col">Status</th><th scope="col">Transitions</th><th scope="col">Started</th><th scope="col">Updated</th></tr></thead>
      <tbody>${s.data.executions.map(r=>o`<tr><td><a href=${"#/julep/execution/"+r.id}><code class="id">${r.id}</code></a></td>
        <td><span class=${"badge status-"+r.status}>${r.status}</span></td><td>${r.transition_count??""}</td>
        <td>${b(r.created_at)}</td><td>${b(r.updated_at)}</td></tr>`)}</tbody>
    </table>`:o`<p class="muted">No executions.</p>`}
    <h3>Steps (main)</h3>
    <ol class="steps">${(n.main||[]).map(r=>o`<li><${V} v=${r} /></li>`)}</ol>
    ${n.input_schema?o`<h3>Input schema</h3><${j} data=${n.input_schema} />`:null}
  </article>`}function Es({id:e}){let{key:t}=x(),s=q(async()=>{let[r,a]=await Promise.all([w(t,"GET",ce+"/executions/"+te(e)),Q(t,"/executions/"+te(e)+"/transitions?direction=asc")]);return{execution:r,transitions:[...a].sort((i,l)=>Date.parse(i.created_at)-Date.parse(l.created_at))}},[t,e]);if(s.error)return o`<${v} error=${s.error} />`;if(!s.data)return o`<${T} what="the execution" />`;let n=s.data.execution;return o`<article>
    <h2><code class="id">${n.id}</code> <span class=${"badge status-"+n.status} id="julep-execution-status">${n.status}</span></h2>
    <p class="muted">Task <a href=${"#/julep/task/"+n.task_id}><code class="id">${n.task_id}</code></a> · started ${b(n.created_at)} · updated ${b(n.updated_at)}</p>
    <p class="row"><button type="button" onClick=${s.reload}>Refresh</button></p>
    <dl class="kv">
      <div><dt>Input</dt><dd><${V} v=${n.input} /></dd></div>
      <div><dt>Output</dt><dd><${V} v=${n.output} /></dd></div>
      ${n.error?o`<div><dt>Error</dt><dd class="failed">${n.error}</dd></div>`:null}
    </dl>
    <h3>Transitions</h3>
    <ol class="events" id="julep-transitions">${s.data.transitions.map(r=>o`<li class="event" data-type=${r.type}>
      <div class="ev-head"><span class="type">${r.type}</span>
        <span class="muted">${r.current?`${r.current.workflow} step ${r.current.step}`:""}${r.next?` \u2192 step ${r.next.step}`:""}${r.metadata&&r.metadata.step_type?` \xB7 ${r.metadata.step_type}`:""}</span>
        <span class="muted">${b(r.created_at)}</span></div>
      <div class="ev-body"><${V} v=${r.output} /></div></li>`)}</ol>
    ${s.data.transitions.length?null:o`<p class="muted">No transitions yet.</p>`}
  </article>`}var Ot=encodeURIComponent,Ve=e=>e>=1<<20?`${(e/(1<<20)).toFixed(1)} MiB`:e>=1024?`${(e/1024).toFixed(1)} KiB`:`${e||0} B`;function jt({args:e}){let{key:t}=x(),s=e[0]||"",n=q(()=>w(t,"GET","/v1/vector_stores?limit=100"),[t]);return o`<${D} title=${s?"Vector store":"Vector stores"}>
    <div class="split">
      <div class="main-col">
        ${s?o`<${Ns} key=${s} id=${s} />`:o`<${As} list=${n} />`}
      </div>
      <aside class="side" aria-label="Vector stores">
        <h2>Stores</h2>
        <${v} error=${n.error} />
        ${n.data?o`<ul class="sessions">${n.data.data.map(r=>o`<li class=${r.id===s?"current":""}>
          <a class="session-title" href=${"#/vector-stores/"+r.id} aria-current=${r.id===s?"page":void 0}>${r.name||r.id}</a>
          <span class="muted">${r.file_counts.total} files · <code class="id">${r.id}</code></span></li>`)}
          ${n.data.data.length?null:o`<li class="muted">None yet: create one with any OpenAI SDK pointed at /v1.</li>`}</ul>`:o`<${T} />`}
      </aside>
    </div>
  <//>`}function As({list:e}){return e.error?null:e.data?e.data.data.length?o`<table class="grid" id="vector-stores"><caption class="sr-only">Vector stores</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Files (done / all)</th><th scope="col">Size</th><th scope="col">Created</th></tr></thead>
    <tbody>${e.data.data.map(t=>o`<tr><td><a href=${"#/vector-stores/"+t.id}>${t.name||t.id}</a></td>
      <td><span class=${"badge status-"+t.status}>${t.status}</span></td><td>${t.file_counts.completed} / ${t.file_counts.total}</td>
      <td>${Ve(t.usage_bytes)}</td><td>${b(t.created_at)}</td></tr>`)}</tbody>
  </table>`:o`<p>No vector stores yet. They hold files for the <code>file_search</code> tool of assistants.</p>`:o`<${T} what="vector stores" />`}function Ns({id:e}){let{key:t}=x(),s=q(async()=>{let l="/v1/vector_stores/"+Ot(e),[c,p,d]=await Promise.all([w(t,"GET",l),w(t,"GET",l+"/files?limit=100"),w(t,"GET","/v1/files?limit=1000")]),$=new Map(d.data.map(h=>[h.id,h.filename]));return{store:c,files:p.data.map(h=>({...h,filename:$.get(h.id)}))}},[t,e]),[n,r]=y(""),a=F(async l=>(await w(t,"POST",`/v1/vector_stores/${Ot(e)}/search`,{query:l,max_num_results:5})).data);if(s.error)return o`<${v} error=${s.error} />`;if(!s.data)return o`<${T} what="the vector store" />`;let i=s.data.store;return o`<article>
    <h2>${i.name||i.id} <span class=${"badge status-"+i.status}>${i.status}</span></h2>
    <dl class="kv">
      <div><dt>ID</dt><dd><code class="id">${i.id}</code></dd></div>
      <div><dt>Size</dt><dd>${Ve(i.usage_bytes)}</dd></div>
      <div><dt>Created</dt><dd>${b(i.created_at)}</dd></div>
      ${i.expires_after?o`<div><dt>Expires</dt><dd>${i.expires_at?b(i.expires_at):""} (${i.expires_after.days} days after ${i.expires_after.anchor})</dd></div>`:null}
      ${Object.keys(i.metadata||{}).length?o`<div><dt>Metadata</dt><dd><${j} data=${i.metadata} /></dd></div>`:null}
    </dl>
    <p class="row"><button type="button" onClick=${s.reload}>Refresh</button></p>
    <h3>Files</h3>
    ${s.data.files.length?o`<table class="grid" id="vector-store-files"><caption class="sr-only">Files in this store</caption>
      <thead><tr><th scope="col">File</th><th scope="col">Status</th><th scope="col">Size indexed</th><th scope="col">Added</th></tr></thead>
      <tbody>${s.data.files.map(l=>o`<tr><td>${l.filename||""} <code class="id muted">${l.id}</code></td>
        <td><span class=${"badge status-"+l.status}>${l.status}</span>${l.last_error?o` <span class="failed">${l.last_error.message}</span>`:null}</td>
        <td>${Ve(l.usage_bytes)}</td><td>${b(l.created_at)}</td></tr>`)}</tbody>
    </table>`:o`<p class="muted">No files.</p>`}
    <h3>Search</h3>
    <form class="row" onSubmit=${l=>{l.preventDefault(),n.trim()&&a.run(n.trim())}}>
      <label for="vs-query" class="sr-only">Search this store</label>
      <input id="vs-query" value=${n} onInput=${l=>r(l.target.value)} placeholder="What the file_search tool would be asked" />
      <button type="submit" disabled=${a.busy}>Search</button>
    </form>
    <${v} error=${a.error} />
    ${a.done?o`<ol class="plain" id="vs-results">${a.done.map(l=>o`<li><strong>${l.filename}</strong> <span class="num muted">${l.score.toFixed(3)}</span>
      <pre class="text">${(l.content||[]).map(c=>c.text).join(`
`)}</pre></li>`)}
      ${a.done.length?null:o`<li class="muted">Nothing found.</li>`}</ol>`:null}
  </article>`}var We=[["chat","Chat",Ct],["timeline","Timeline",At],["agents","Agents",Pt],["assistants","Assistants",Rt],["vector-stores","Vector stores",jt],["julep","Julep",Lt],["operations","Operations",Mt]],Bt=()=>location.hash.replace(/^#\/?/,"").split("/").map(decodeURIComponent).filter(Boolean);function Is(){let[e,t]=y(Bt());return R(()=>{let s=()=>t(Bt());return addEventListener("hashchange",s),()=>removeEventListener("hashchange",s)},[]),e}function Ps({onSignIn:e,error:t}){let[s,n]=y(""),[r,a]=y(!1),[i,l]=y(null);return R(()=>{ye().then(l,()=>l({ready:!1,status:{reason:"the node does not answer"}}))},[]),o`<main id="main" class="signin">
    <h1>Contrail console</h1>
    <form onSubmit=${async p=>{p.preventDefault(),a(!0),await e(s.trim()),a(!1)}} aria-describedby="where-key">
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
  </main>`}function Rs({session:e,route:t,onSignOut:s,lost:n}){let[r,...a]=t,i=We.find(c=>c[0]===r)||We[0],l=i[2];return R(()=>{document.title=`${i[1]} \xB7 Contrail`},[i]),o`<${Fe.Provider} value=${e}>
    <a class="skip" href="#main" onClick=${c=>{c.preventDefault(),document.querySelector("main h1")?.focus()}}>Skip to content</a>
    <header class="top">
      <span class="brand">Contrail</span>
      <nav aria-label="Pages"><ul>${We.map(([c,p])=>o`<li><a href=${"#/"+c} aria-current=${c===i[0]?"page":void 0}>${p}</a></li>`)}</ul></nav>
      <span class="who">${e.me.username||e.me.account_id}${e.me.admin?o` <span class="badge">admin</span>`:null}</span>
      <button type="button" class="signout" onClick=${s}>Sign out</button>
    </header>
    ${n?o`<p class="error banner" role="alert">${n} <button type="button" onClick=${()=>location.reload()}>Reconnect</button></p>`:null}
    <main id="main"><${l} args=${a} /></main>
  <//>`}function Ds(){let e=Is(),[t,s]=y(vt()),[n,r]=y(null),[a,i]=y(null),[l,c]=y(""),p=async h=>{try{let u=await w(h,"GET","/admin/whoami");kt(h),i(null),r(u),s(h)}catch(u){Oe(),s(""),r(null),i(u instanceof ee&&u.status===401?`That key was refused: ${u.message}. Check that you copied all of it.`:u)}};R(()=>{t&&!n&&p(t)},[]);let d=ne(()=>!t||!n?null:{key:t,me:n,subs:new be(t,h=>c(`Lost the live connection to the node (${h}).`))},[t,n]);R(()=>()=>d&&d.subs.close(),[d]),R(()=>{document.body.dataset.ready=d?"console":t?"checking":"signin",performance.getEntriesByName("console-interactive").length||performance.mark("console-interactive")});let $=()=>{Oe(),s(""),r(null),i(null),location.hash=""};return d?o`<${Rs} session=${d} route=${e} onSignOut=${$} lost=${l} />`:t&&!a?o`<main id="main"><p class="muted">Signing in…</p></main>`:o`<${Ps} onSignIn=${p} error=${a} />`}ot(o`<${Ds} />`,document.getElementById("app"));})();
