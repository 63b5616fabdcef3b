var o="https://search.worldbank.org/api/v3/wds",t="https://www.worldbank.org/en/about/legal/terms-and-conditions";export{o as a,t as b};
