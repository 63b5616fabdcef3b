var o=["auto","screen","file"],e=["csv","json"];export{o as a,e as b};
