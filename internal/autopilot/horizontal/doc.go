// Package horizontal decides how many replicas a service group should run:
// the pure core of Strata's horizontal autoscaling. The simulator (`strata
// sim horizontal`) and the cell's autoscaler feed it the same Telemetry
// every sync period and get the same Decision: a replica count, what set it
// (forecast, reactive, recent peak, idle, hold, bounds) and a reason a
// person reads.
//
// An Autoscaler learns a seasonal profile of the group's demand in slots
// (15 min by default): for every slot of the day (last 7 days) and of the
// week (last 3 weeks) the arrivals and the mean work in flight it saw.
// From it, each decision:
//
//   - forecasts every slot from now to now + the start-up lead (the 90th
//     percentile of its replicas' measured start-ups, plus one sync): a
//     slot expecting ActiveArrivals or more is busy and keeps at least one
//     replica warm, and ⌈the expected work in flight⌉ are started ahead of
//     it; a slot expecting less is idle, and the group scales in on the
//     forecast — to zero when ScaleToZero allows it and nothing is in
//     flight;
//   - reacts to the work in flight now (plus Spare replicas while work
//     flows) for what the forecast missed, and holds the peak of the last
//     ScaleInDelay (IdleScaleInDelay in an idle slot) before scaling in;
//   - holds the current count, with the reason, when the telemetry is
//     missing or older than MaxTelemetryAge: nothing is scaled on bad data;
//   - in ModeForecastOnly acts on the reactive rule alone and reports what
//     the forecast would have set.
//
// Every decision is within [Min, Max]. The package never reads the clock,
// does no I/O and holds no goroutines; it must never act (the caller adds
// and removes replicas through the normal evaluation path, folds the
// namespace quota into Max, and does not call it while a deployment of the
// group is in progress).
package horizontal
