//! `node --import ./harness/register.mjs ...`: installs the JSON load hook before anything loads.
import { register } from "node:module";
register("./json-hooks.mjs", import.meta.url);
