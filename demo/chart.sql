-- demo/chart.sql: demo/revenue.html, a self-contained SVG chart of daily revenue from the
-- table `chart` that demo/lab.sql leaves: published, after the append mistake, after the
-- backfill, and the truth from the source; below it, the correction the backfill made per
-- day.  Printed by psql -At into the file.
--
-- Two panels share the x axis, one point per day.  The top panel's y range is the published
-- history's (published, after the backfill, the truth), not zero-based, so that the six wrong
-- months stand apart from the true line; the append mistake's doubled month runs off that
-- range and is drawn along its top edge, its peak written beside it.  Light gridlines at
-- round values; the range of the backfill run (from backfill_runs) is shaded; a day whose
-- correction is 0 (no refunds that day) is marked and said.
-- Elements that scripts/check_chart.py checks carry data attributes: each plot area
-- data-plot (with data-days, the points each of its series must have), each series
-- data-series and data-in (its plot), each legend sample data-legend.
WITH d AS (
	SELECT row_number() OVER (ORDER BY day) - 1 AS i, count(*) OVER () AS n, day,
		   published, after_append, after_backfill, truth, published - after_backfill AS correction
	FROM chart
), bf AS (
	-- the range of the last backfill run on fct_revenue, [range_from, range_to)
	SELECT r.range_from::date AS lo, r.range_to::date AS hi,
		   (SELECT count(*) FROM backfill_tasks t WHERE t.run_id = r.id) AS partitions
	FROM backfill_runs r WHERE r.target = 'public.fct_revenue' AND r.status = 'done'
	ORDER BY r.id DESC LIMIT 1
), raw AS (
	SELECT max(n) AS n, max(greatest(published, after_backfill, truth)) AS top,
		   min(least(published, after_backfill, truth)) AS bottom, max(after_append) AS spike,
		   greatest(max(correction), 1) AS ctop,
		   avg(correction / truth) FILTER (WHERE day >= (SELECT lo FROM bf) AND day < (SELECT hi FROM bf)) AS share
	FROM d
), g AS (
	-- plot areas (x from l to r; top panel t..b, correction panel t2..b2) and round tick steps;
	-- the top panel spans the published history with room above it for the legend
	SELECT 90 AS l, 1110 AS r, 40 AS t, 400 AS b, 490 AS t2, 600 AS b2, n, top, spike, ctop, share, ystep, cstep,
		   greatest(floor((bottom - (top - bottom) * 0.6) / ystep) * ystep, 0) AS ymin,
		   ceil((top + (top - bottom)) / ystep) * ystep AS ymax, ceil(ctop / cstep) * cstep AS cmax
	FROM raw,
		 LATERAL (SELECT greatest(top - bottom, 1) * 2.6 / 6 AS want) w,
		 LATERAL (SELECT min(f * 10 ^ floor(log(want))) AS ystep FROM unnest('{1,2,2.5,5,10}'::numeric[]) f
				  WHERE f * 10 ^ floor(log(want)) >= want) ys,
		 LATERAL (SELECT min(f * 10 ^ floor(log(ctop / 3))) AS cstep FROM unnest('{1,2,2.5,5,10}'::numeric[]) f
				  WHERE f * 10 ^ floor(log(ctop / 3)) >= ctop / 3) cs
), p AS (
	-- every day's screen position in both panels
	SELECT d.*, round(g.l + d.i * (g.r - g.l)::numeric / greatest(g.n - 1, 1), 1) AS x
	FROM d, g
), s AS (
	SELECT s.id, s.k, s.color, s.width, s.dash, s.label,
		   string_agg(format('%s,%s', x, round(y, 1)), ' ' ORDER BY i) AS points
	FROM (SELECT i, x, id, k, color, width, dash, label,
				 CASE WHEN id = 'correction' THEN g.b2 - v * (g.b2 - g.t2) / g.cmax
					  ELSE least(greatest(g.b - (v - g.ymin) * (g.b - g.t) / (g.ymax - g.ymin), g.t), g.b) END AS y
		  FROM p, g, LATERAL (VALUES
			('truth', 0, '#9ecae1', 7, '', 'true revenue (from orders and refunds)', truth),
			('published', 1, '#d62728', 2, '', 'published (version 1: refunds not taken out)', published),
			('append', 2, '#ff7f0e', 2, '3 7', 'after the append mistake (this month re-run once more; off the scale)', after_append),
			('backfill', 3, '#2ca02c', 2, '', 'after the backfill (backfill_plan + CALL backfill_run)', after_backfill),
			('correction', 4, '#6a51a3', 2, '', 'published − after the backfill', correction)
		  ) AS v(id, k, color, width, dash, label, v)) s
	GROUP BY s.id, s.k, s.color, s.width, s.dash, s.label
), band AS (
	-- the backfilled days, half a day either side
	SELECT greatest(min(x) - (g.r - g.l) / (2.0 * greatest(g.n - 1, 1)), g.l) AS x0,
		   least(max(x) + (g.r - g.l) / (2.0 * greatest(g.n - 1, 1)), g.r) AS x1
	FROM p, bf, g WHERE p.day >= bf.lo AND p.day < bf.hi GROUP BY g.l, g.r, g.n
)
SELECT concat(
'<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>backfill: daily revenue, before and after</title>
<style>
body{font-family:"DejaVu Sans",sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 8px} p{max-width:1100px;margin:0 0 12px;font-size:14px}
svg text{font-family:"DejaVu Sans",sans-serif} svg text:not([fill]){fill:#333}
</style></head>
<body><h1>Daily revenue: published, the append mistake, the backfill, the truth</h1>
<p>Measured by <code>make demo</code>: six months published by a model that did not take refunds out, this month by the
fixed model; a re-run of this month with an append strategy doubles it; the backfill (one committed partition swap per
day) brings the six months onto the true line and leaves this month as it was.</p>
<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 1140 650" style="max-width:1140px;height:auto" role="img" aria-label="daily revenue">
<rect x="0" y="0" width="1140" height="650" fill="#ffffff"/>
',
-- the backfilled range, shaded, with its label at the foot of the top panel
(SELECT format('<rect id="backfilled-range" x="%s" y="%s" width="%s" height="%s" fill="#f3eefa"/>
<rect x="%s" y="%s" width="%s" height="%s" fill="#f3eefa"/>
<text x="%s" y="%s" font-size="13" text-anchor="middle" fill="#54278f" font-weight="bold">backfilled: %s to %s, %s daily partitions, one committed swap each</text>
',
			   round(x0, 1), g.t, round(x1 - x0, 1), g.b - g.t,
			   round(x0, 1), g.t2, round(x1 - x0, 1), g.b2 - g.t2,
			   round((x0 + x1) / 2, 1), g.b - 12, to_char(bf.lo, 'FMDD Mon YYYY'), to_char(bf.hi - 1, 'FMDD Mon YYYY'), bf.partitions)
 FROM band, bf, g),
-- gridlines and tick values: y in both panels, x at the first of each month
(SELECT string_agg(format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/><text x="%s" y="%s" font-size="12" text-anchor="end">%s</text>',
						  g.l, y, g.r, y, CASE WHEN v = 0 THEN '#888888' ELSE '#e3e3e3' END, g.l - 6, y + 4, to_char(v, 'FM999,999,990')), E'\n' ORDER BY v)
 FROM g, LATERAL (SELECT v, round(g.b - (v - g.ymin) * (g.b - g.t) / (g.ymax - g.ymin), 1) AS y
				  FROM generate_series(g.ymin, g.ymax, g.ystep) v) t),
E'\n',
(SELECT string_agg(format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/><text x="%s" y="%s" font-size="11" text-anchor="end">%s</text>',
						  g.l, y, g.r, y, CASE WHEN v = 0 THEN '#888888' ELSE '#e3e3e3' END, g.l - 6, y + 4, to_char(v, 'FM999,999,990')), E'\n' ORDER BY v)
 FROM g, LATERAL (SELECT v, round(g.b2 - v * (g.b2 - g.t2) / g.cmax, 1) AS y FROM generate_series(0::numeric, g.cmax, g.cstep) v) t),
E'\n',
(SELECT string_agg(format('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/><text x="%s" y="%s" font-size="12" text-anchor="%s">%s</text><text x="%s" y="%s" font-size="11" text-anchor="%s">%s</text>',
						  x, g.t, x, g.b, x, g.t2, x, g.b2,
						  -- a tick at the plot's left edge starts there, clear of the y axis's values
						  x, g.b + 18, CASE WHEN x - g.l < 40 THEN 'start' ELSE 'middle' END, to_char(day, 'FMDD Mon YYYY'),
						  x, g.b2 + 16, CASE WHEN x - g.l < 40 THEN 'start' ELSE 'middle' END, to_char(day, 'Mon')), E'\n' ORDER BY i)
 FROM p, g WHERE extract(day FROM day) = 1),
-- the plot areas the series must stay in, and the axis titles with the unit
(SELECT format('
<rect id="plot-main" data-plot="main" data-days="%s" x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888888"/>
<rect id="plot-correction" data-plot="correction" data-days="%s" x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888888"/>
<text transform="translate(24,%s) rotate(-90)" font-size="13" text-anchor="middle">revenue per day (currency units)</text>
<text transform="translate(24,%s) rotate(-90)" font-size="12" text-anchor="middle">per day</text>
<text x="%s" y="%s" font-size="14" font-weight="bold">The correction: published − after the backfill, per day (currency units)</text>
<text x="%s" y="%s" font-size="13" text-anchor="end" fill="#54278f">in the backfilled range, %s%% of the true revenue on average</text>
',
			   g.n, g.l, g.t, g.r - g.l, g.b - g.t, g.n, g.l, g.t2, g.r - g.l, g.b2 - g.t2,
			   (g.t + g.b) / 2, (g.t2 + g.b2) / 2, g.l, g.t2 - 10, g.r, g.t2 - 10, round(g.share * 100, 1))
 FROM g),
-- the correction's area, then the series, the widest first
(SELECT format('<polygon points="%s,%s %s %s,%s" fill="#dadaeb"/>', g.l, g.b2, points, g.r, g.b2) FROM s, g WHERE id = 'correction'),
E'\n',
(SELECT string_agg(format('<polyline id="series-%s" data-series="%s" data-in="%s" fill="none" stroke="%s" stroke-width="%s"%s stroke-linejoin="round" points="%s"/>',
						  id, id, CASE WHEN id = 'correction' THEN 'correction' ELSE 'main' END, color, width,
						  CASE WHEN dash <> '' THEN format(' stroke-dasharray="%s"', dash) ELSE '' END, points),
				   E'\n' ORDER BY k) FROM s),
-- notes on the lines: what the append did, what the backfill corrected, where a line hides
(SELECT format('
<text x="%s" y="%s" font-size="13" text-anchor="end" fill="#c25400">▲ append re-run: this month counted twice, up to %s a day, off the scale</text>
<text x="%s" y="%s" font-size="13" text-anchor="middle" fill="#b01c1d">published: refunds not taken out, %s%% too high on average</text>
<text x="%s" y="%s" font-size="13" text-anchor="middle" fill="#1f7a1f">after the backfill = truth (the green line runs inside the blue band)</text>
<text x="%s" y="%s" font-size="12" text-anchor="end" fill="#54278f">0: this month was already right</text>
',
			   g.r - 4, g.t + 20, to_char(g.spike, 'FM999,999,990'),
			   round((b.x0 + b.x1) / 2, 1), round(g.b - ((SELECT max(published) FROM d) - g.ymin) * (g.b - g.t) / (g.ymax - g.ymin) - 12, 1), round(g.share * 100, 1),
			   round((b.x0 + b.x1) / 2, 1), round(g.b - ((SELECT min(truth) FROM d) - g.ymin) * (g.b - g.t) / (g.ymax - g.ymin) + 26, 1),
			   g.r - 4, g.b2 - 8)
 FROM g, band b),
-- the axis of the top panel does not start at zero: said where the eye starts
-- (at the right: the backfilled range's label runs along the bottom from the left)
(SELECT format('<text x="%s" y="%s" font-size="11" text-anchor="end" fill="#666666">axis from %s, not 0</text>', g.r - 6, g.b - 6, to_char(g.ymin, 'FM999,999,990'))
 FROM g WHERE g.ymin > 0),
-- a day of the backfilled range whose correction is 0: marked on the axis, said below it
(SELECT string_agg(format('<circle cx="%s" cy="%s" r="4" fill="none" stroke="#54278f" stroke-width="1.5"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#54278f"/><text x="%s" y="%s" font-size="12" fill="#54278f">%s: 0, no order of that day was refunded, so the backfill rewrote it identically</text>',
						  p.x, g.b2, p.x, g.b2 + 4, p.x, g.b2 + 22, p.x + 4, g.b2 + 34, to_char(p.day, 'FMDD Mon')), E'\n' ORDER BY p.day)
 FROM p, g, bf WHERE p.correction = 0 AND p.day >= bf.lo AND p.day < bf.hi),
-- the legend, each sample drawn as its series is (width and dashes)
(SELECT format('<rect x="%s" y="%s" width="430" height="%s" fill="#ffffff" fill-opacity="0.92" stroke="#cccccc"/>', g.l + 10, g.t + 8, 4 * 20 + 10) FROM g),
(SELECT string_agg(format('<line data-legend="%s" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/><text x="%s" y="%s" font-size="13">%s</text>',
						  id, g.l + 20, g.t + 23 + k * 20, g.l + 56, g.t + 23 + k * 20, color, width,
						  CASE WHEN dash <> '' THEN format(' stroke-dasharray="%s"', dash) ELSE '' END,
						  g.l + 64, g.t + 28 + k * 20, label), '' ORDER BY k)
 FROM s, g WHERE id <> 'correction'),
'
</svg></body></html>');
