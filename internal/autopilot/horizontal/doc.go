// Package horizontal decides how many replicas a service group should run:
// the pure core of Strata's horizontal autoscaling. The simulator (`strata
// sim horizontal`) and the cell's autoscaler feed it the same Telemetry
// every sync period and get the same Decision: a replica count, what set it
// (forecast, reactive, recent, idle, hold, bounds) and a reason a person
// reads.
//
// An Autoscaler learns two things from the telemetry it is shown:
//
//   - a seasonal profile of the group's demand in slots (15 min by
//     default): for every slot of the day (last 7 days) and of the week
//     (last 3 weeks) the arrivals and the mean work in flight it saw; from
//     it, the forecast level of the slots from now to now + the start-up
//     lead (the 90th percentile of its replicas' measured start-ups, plus
//     one sync): how many replicas the time of day and week usually needs;
//   - how far the work in flight rises within that lead, per moment: a
//     moment is the work in flight, the arrivals of the last minute and of
//     the last 15 minutes, and the forecast level; each decision's moment
//     is counted once its lead has passed, with weights that decay (half
//     life LearnHalfLife), a sparse moment leaning on coarser ones.
//
// Each decision keeps the work in flight plus the fewest spare replicas
// whose rise was exceeded in at most Risk of the past moments like this
// one — a base stock whose lead time is the start-up time — so the group
// scales out ahead of the rises the time of day and the recent traffic
// foretell, and in (to zero with ScaleToZero) when they foretell none. A
// scale-in never goes below the peak work in flight of the last
// ScaleInDelay nor below a count decided within the last Settle. The work
// in flight is always covered: a moment never seen before gets the
// reactive rule (the work in flight plus one spare). Telemetry missing or
// older than MaxTelemetryAge holds the current count with the reason:
// nothing is scaled on bad data. ModeForecastOnly acts on the reactive
// rule (the work in flight plus Spare) and reports what the forecast would
// have set.
//
// Every decision is within [Min, Max]. The package never reads the clock,
// does no I/O and holds no goroutines; it must never act (the caller adds
// and removes replicas through the normal evaluation path, folds the
// namespace quota into Max, and does not call it while a deployment of the
// group is in progress).
package horizontal
