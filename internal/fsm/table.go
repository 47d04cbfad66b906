package fsm

// Commands is the server's command table: every kind of raft entry, one
// line each, in the order of their values. It is checked when the
// program starts (NewTable: a value, a name or a body type twice stops
// it) and by TestCommandTable (every value below decodes, and none ever
// changes: TestCommandValuesNeverChange holds them as they are on disk).
//
// Adding a command is one line here plus its code:
//
//  1. Write its body type (exported: proposers build it) and its Apply,
//     and, when it has them, its Events and Effects, in the file of its
//     concept (say, resize.go).
//  2. Add command(<next free value>, "<name>", Def[YourBody]{...}) below.
//     Take the next value after the largest; never reuse one, even of a
//     command removed since: old logs still hold it.
//  3. Add the value and name to TestCommandValuesNeverChange, and a case
//     to TestFSMCommands.
//
// Proposers then write it with Proposer.Propose(&YourBody{...}); nothing
// else dispatches on commands.
var Commands = mustTable(
	command(1, "upsert-workload", Def[UpsertWorkload]{Apply: applyUpsertWorkload, Events: upsertWorkloadEvents,
		Effects: func(c *UpsertWorkload) Effects { return evals(c.Eval) }}),
	command(2, "stop-workload", Def[StopWorkload]{Apply: applyStopWorkload, Events: stopWorkloadEvents,
		Effects: func(c *StopWorkload) Effects { return evals(c.Eval) }}),
	command(3, "upsert-node", Def[UpsertNode]{Apply: answerless(applyUpsertNode), Events: upsertNodeEvents, Effects: upsertNodeEffects}),
	command(4, "node-status", Def[NodeStatus]{Apply: answerless(applyNodeStatus), Events: nodeStatusEvents, Effects: nodeStatusEffects}),
	command(5, "upsert-evals", Def[UpsertEvals]{Apply: answerless(applyUpsertEvals),
		Effects: func(c *UpsertEvals) Effects { return evals(c.Evals...) }}),
	// A plan written whole, as logs from before plan parts hold it.
	command(6, "apply-plan", Def[ApplyPlan]{Apply: answerless(applyPlan), Events: planEvents, Effects: planEffects, DecodeOnly: true}),
	command(7, "alloc-client-update", Def[AllocClientUpdate]{Apply: answerless(applyAllocClientUpdate), Events: allocClientUpdateEvents,
		Effects: allocClientUpdateEffects}),
	command(8, "set-cell-config", Def[SetCellConfig]{Apply: answerless(applySetCellConfig), Events: setCellConfigEvents}),
	// One part of a plan (planparts.go): written by PlanParts, read back
	// into an ApplyPlan.
	command(planPartValue, "apply-plan-part", Def[ApplyPlan]{Apply: answerless(applyPlan), Events: planEvents, Effects: planEffects,
		Decode: decodePlanPart, DecodeOnly: true}),
	command(10, "set-cell-id", Def[SetCellID]{Apply: answerless(applySetCellID), Events: setCellIDEvents}),
	command(11, "node-op", Def[NodeOp]{Apply: answerless(applyNodeOp), Events: nodeOpEvents, Effects: nodeOpEffects}),

	command(40, "migrate", Def[Migrate]{Apply: applyMigrate, Events: migrateEvents}),

	command(64, "set-cell-secret", Def[SetCellSecret]{Apply: answerless(applySetCellSecret), Effects: setCellSecretEffects}),
	command(65, "acl-bootstrap", Def[ACLBootstrap]{Apply: answerless(applyACLBootstrap)}),
	command(66, "upsert-acl-policy", Def[UpsertACLPolicy]{Apply: answerless(applyUpsertACLPolicy)}),
	command(67, "delete-acl-policy", Def[DeleteACLPolicy]{Apply: answerless(applyDeleteACLPolicy)}),
	command(68, "upsert-acl-token", Def[UpsertACLToken]{Apply: answerless(applyUpsertACLToken)}),
	command(69, "append-audit", Def[AppendAudit]{Apply: answerless(applyAppendAudit)}),

	command(96, "upsert-namespace", Def[UpsertNamespace]{Apply: answerless(applyUpsertNamespace)}),
	command(97, "delete-namespace", Def[DeleteNamespace]{Apply: answerless(applyDeleteNamespace)}),

	command(112, "promote-deployment", Def[PromoteDeployment]{Apply: answerless(applyPromoteDeployment), Events: promoteDeploymentEvents,
		Effects: func(c *PromoteDeployment) Effects { return evals(c.Eval) }}),
	command(113, "fail-deployment", Def[FailDeployment]{Apply: answerless(applyFailDeployment), Events: failDeploymentEvents,
		Effects: failDeploymentEffects}),

	command(128, "collect-garbage", Def[CollectGarbage]{Apply: answerless(applyCollectGarbage)}),
	command(129, "retry-evaluation", Def[RetryEval]{Apply: answerless(applyRetryEval), Events: retryEvalEvents,
		Effects: func(c *RetryEval) Effects { return evals(c.Eval) }}),
	// Events of the leader's soft-state cores: incidents, anomalies.
	command(130, "record-events", Def[RecordEvents]{Apply: answerless(applyRecordEvents), Events: recordEventsEvents}),
)

// planPartValue is apply-plan-part's value, which PlanParts writes itself.
const planPartValue Type = 9
