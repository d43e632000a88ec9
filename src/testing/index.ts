/**
 * `polyloop/testing` — tools for testing agents and seams: a scripted model, a small JSON action
 * protocol interpreter, a fault-injecting store that "crashes" after the k-th write, an event
 * sink that collects, and a contract suite per seam (model caller, interpreter, executor, event
 * sink, store) — the checks we run over our own seams, for users to run over theirs. Web APIs
 * only: everything here runs in Node, workerd and browsers, under any test framework.
 * @module
 */
export { collectingSink } from './collecting-sink.ts';
export type { CollectingSink } from './collecting-sink.ts';
export { crashAtEveryWrite } from './crash-law.ts';
export type { CrashCase, CrashLawOptions, CrashLawReport, CrashLawUpgrade } from './crash-law.ts';
export { faultyStore, SimulatedCrashError } from './faulty-store.ts';
export type { FaultyStore, WriteMethod } from './faulty-store.ts';
export { jsonActionInterpreter } from './json-interpreter.ts';
export { scriptedModel } from './scripted-model.ts';
export type { Script, ScriptedModel, ScriptedReply } from './scripted-model.ts';
export { ContractViolationError } from './contracts/check.ts';
export type { ContractCase, ContractSuite } from './contracts/check.ts';
export { runStoreContract } from './contracts/run-store.ts';
export type { RunStoreContractOptions } from './contracts/run-store.ts';
export { modelCallerContract } from './contracts/model-caller.ts';
export type { ModelCallerContractOptions, ModelScenario } from './contracts/model-caller.ts';
export { decisionInterpreterContract } from './contracts/decision-interpreter.ts';
export type { DecisionInterpreterContractOptions } from './contracts/decision-interpreter.ts';
export { actionExecutorContract } from './contracts/action-executor.ts';
export type { ActionExecutorContractOptions } from './contracts/action-executor.ts';
export { eventSinkContract } from './contracts/event-sink.ts';
export type { EventSinkContractOptions } from './contracts/event-sink.ts';
