package server

func init() {
	for route, call := range map[string][2]string{
		"POST /v1/workloads/plan":              {"/v1/workloads/plan", ""},
		"GET /v1/workloads/{name}/versions":    {"/v1/workloads/nope/versions", ""},
		"POST /v1/workloads/{name}/revert":     {"/v1/workloads/nope/revert", `{"version":1}`},
		"GET /v1/workloads/{name}/deployments": {"/v1/workloads/nope/deployments", ""},
		"GET /v1/deployments":                  {"/v1/deployments", ""},
		"GET /v1/deployments/{id}":             {"/v1/deployments/nope", ""},
		"POST /v1/deployments/{id}/promote":    {"/v1/deployments/nope/promote", "{}"},
		"POST /v1/deployments/{id}/fail":       {"/v1/deployments/nope/fail", "{}"},
	} {
		routeCalls[route] = call
	}
}
