package spec

// The field names each mapping of a document accepts, for "did you mean"
// when a key is unknown (suggest.Closest only ever offers a name of the
// list it is given). Each list is the set of keys its decoder's switch
// accepts: TestKeyListsMatchDecoders reads the decoders' source and fails
// when a list and its switch differ.
var (
	workloadKeys   = []string{"apiVersion", "kind", "metadata", "spec"}
	metadataKeys   = []string{"name", "namespace", "labels"}
	specKeys       = []string{"priorityClass", "priority", "schedulingPolicy", "groups", "containers", "placementConstraints"}
	seedPolicyKeys = []string{"type", "rebalanceFrequency"}
	groupKeys      = []string{"name", "gang", "replicas", "restartPolicy", "placement", "reschedule", "disconnect", "update",
		"atMostOnce", "disruption", "tasks", "ports", "services", "shutdownDelay"}
	taskKeys = []string{"name", "driver", "command", "env", "user", "secrets", "network", "workDir", "image", "resources",
		"devices", "killTimeout", "checks", "pidsLimit"}
	resourceKeys      = []string{"cpu", "memory", "disk", "bandwidth", "gpu", "gpuModels", "exclusiveCores", "hugepages", "memoryTiers"}
	restartPolicyKeys = []string{"mode", "attempts", "delay", "maxDelay"}
	rescheduleKeys    = []string{"attempts", "interval", "delay", "delayFunction", "maxDelay", "unlimited"}
	disconnectKeys    = []string{"lostAfter", "replace", "reconcile", "stopAfter"}
	updateKeys        = []string{"maxParallel", "canary", "minHealthyTime", "healthyDeadline", "progressDeadline", "stagger",
		"autoPromote", "autoRevert"}
	disruptionKeys = []string{"maxUnavailable"}
	gangKeys       = []string{"minMember", "timeout", "topology"}
	deviceKeys     = []string{"class", "count", "attributes", "numaLocal"}
	portKeys       = []string{"name", "static"}
	checkKeys      = []string{"name", "type", "purpose", "port", "path", "command", "interval", "timeout", "initialDelay",
		"successThreshold", "failureThreshold"}
	serviceKeys   = []string{"name", "port", "tags", "labels", "checks"}
	secretKeys    = []string{"name", "value", "env"}
	envSecretKeys = []string{"secret"}
	placementKeys = []string{"require", "prefer", "avoid", "spread", "affinity", "antiAffinity", "communicatesWith", "dataLocality"}
	labelRuleKeys = []string{"key", "op", "values", "weight", "window"}
	modeKeys      = []string{"mode", "weight"}
	spreadKeys    = append([]string{"key", "maxSkew"}, modeKeys...)
	affinityKeys  = append([]string{"workload", "group", "key"}, modeKeys...)
	peerKeys      = []string{"workload", "weight"}
	dataRuleKeys  = append([]string{"dataset"}, modeKeys...)

	cellConfigKeys = []string{"apiVersion", "kind", "schedulingPolicy", "timeWindows", "limits"}
	cellLimitKeys  = []string{"workloads", "replicas", "namespaceWorkloads", "namespaceReplicas"}
	timeWindowKeys = []string{"name", "days", "start", "end", "timeZone"}
)
