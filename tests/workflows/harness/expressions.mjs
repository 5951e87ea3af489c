//! Evaluates `if:` conditions and model tokens (whose `${{ }}` the parser already turned into
//! expressions) with GitHub's own
//! `@actions/expressions`; the status functions (`success()`, `failure()`, `always()`,
//! `cancelled()`) are the runner's part and come from the caller.
import { Evaluator, Lexer, Parser, data } from "@actions/expressions";
import { truthy } from "@actions/expressions/result";

/** Context names every expression may name (absent ones evaluate as empty dictionaries). */
export const CONTEXT_NAMES = ["github", "env", "vars", "inputs", "steps", "job", "jobs", "runner", "needs",
  "strategy", "matrix", "secrets"];

const STATUS_FUNCTIONS = ["success", "failure", "always", "cancelled"];

/** Plain JSON-like JS value -> ExpressionData. */
export function toData(value) {
  return JSON.parse(JSON.stringify(value ?? null), data.reviver);
}

/** ExpressionData -> plain JS value. */
export function toPlain(d) {
  return JSON.parse(JSON.stringify(d, data.replacer));
}

/**
 * Evaluate one expression (without `${{ }}`). `contexts` is a plain object of context values;
 * `status` maps `success`/`failure`/`always`/`cancelled` to booleans (omitted: the functions are
 * unknown, as in contexts where GitHub does not allow them). Throws on a parse or evaluation error
 * with the expression in the message.
 */
export function evaluate(expr, contexts, status) {
  const dict = new data.Dictionary();
  for (const name of CONTEXT_NAMES) {
    dict.add(name, toData(contexts[name] ?? {}));
  }
  const infos = [];
  const fns = new Map();
  if (status) {
    for (const name of STATUS_FUNCTIONS) {
      infos.push({ name, minArgs: 0, maxArgs: 0 });
      fns.set(name, { name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(Boolean(status[name])) });
    }
  }
  infos.push({ name: "hashFiles", minArgs: 1, maxArgs: 255 });
  fns.set("hashfiles", { name: "hashFiles", minArgs: 1, maxArgs: 255, call: () => {
    throw new Error("hashFiles() is not emulated by the workflow test harness");
  } });
  try {
    const lexed = new Lexer(expr).lex();
    const tree = new Parser(lexed.tokens, CONTEXT_NAMES, infos).parse();
    return new Evaluator(tree, dict, fns).evaluate();
  } catch (e) {
    throw new Error(`expression \`${expr}\`: ${e.message}`);
  }
}

/** An `if:` condition (already given its status function by the converter) -> boolean. */
export function condition(expr, contexts, status) {
  return truthy(evaluate(expr, contexts, status));
}

const TOKEN = { String: 0, Sequence: 1, Mapping: 2, BasicExpression: 3, InsertExpression: 4, Boolean: 5,
  Number: 6, Null: 7 };

/**
 * Evaluate a workflow-parser template token into a plain JS value: expressions are evaluated
 * (a whole-value expression keeps its type, as GitHub does), mappings and sequences recursively.
 */
export function tokenValue(token, contexts) {
  if (token === undefined || token === null) return undefined;
  if (typeof token !== "object") return token;
  switch (token.templateTokenType ?? token.type) {
    case TOKEN.String: return token.value;
    case TOKEN.Boolean: return token.value;
    case TOKEN.Number: return token.value;
    case TOKEN.Null: return null;
    case TOKEN.BasicExpression: return toPlain(evaluate(token.expression ?? token.expr, contexts));
    case TOKEN.Sequence: return token.seq.map((t) => tokenValue(t, contexts));
    case TOKEN.Mapping: {
      const out = {};
      for (const pair of token.map) out[pair.key.value ?? tokenValue(pair.key, contexts)] = tokenValue(pair.value, contexts);
      return out;
    }
    default:
      throw new Error(`template token of type ${token.type} is not emulated`);
  }
}

/** A value as a runner passes it to a process or an output: strings as is, others stringified. */
export function asString(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  return JSON.stringify(value, null, 2);
}
