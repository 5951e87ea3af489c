//! Load hook: `@actions/workflow-parser` imports its schema JSON without `with {type: "json"}`
//! (actions/languageservices#387), which node refuses; add the attribute for `.json` URLs.
export async function load(url, context, nextLoad) {
  if (url.endsWith(".json")) {
    return nextLoad(url, { ...context, importAttributes: { ...context.importAttributes, type: "json" } });
  }
  return nextLoad(url, context);
}
