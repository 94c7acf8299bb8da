-- demo/chart.sql: demo/revenue.html, a self-contained SVG chart of daily revenue from the
-- table `chart` that demo/lab.sql leaves: published, after the append mistake, after the
-- backfill, and the truth from the source.  Printed by psql -At into the file.
WITH d AS (
	SELECT row_number() OVER (ORDER BY day) - 1 AS i, count(*) OVER () AS n, day, published, after_append, after_backfill, truth,
		   max(greatest(published, after_append, after_backfill, truth)) OVER () AS top
	FROM chart
), pts AS (
	SELECT s.id, s.color, s.width, s.dash, s.label,
		   string_agg(format('%s,%s', round(70 + i * 1040.0 / greatest(n - 1, 1), 1),
							 round(430 - v / top * 390, 1)), ' ' ORDER BY i) AS points
	FROM d, LATERAL (VALUES
		('truth', '#9ecae1', 7, '', 'true revenue (from orders and refunds)', truth),
		('published', '#d62728', 2, '', 'published (version 1: refunds not taken out)', published),
		('append', '#ff7f0e', 2, '6 4', 'after the append mistake (this month re-run once more)', after_append),
		('backfill', '#2ca02c', 2, '', 'after the backfill (backfill_plan + CALL backfill_run)', after_backfill)
	) AS s(id, color, width, dash, label, v)
	GROUP BY s.id, s.color, s.width, s.dash, s.label
), axis AS (
	SELECT string_agg(format('<text x="%s" y="452" font-size="11" text-anchor="middle">%s</text>',
							 round(70 + i * 1040.0 / greatest(n - 1, 1), 1), to_char(day, 'YYYY-MM-DD')), '' ORDER BY i) AS ticks,
		   max(top) AS top, min(day) AS first, max(day) AS last
	FROM d WHERE extract(day FROM day) = 1
)
SELECT concat(
'<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>backfill: daily revenue, before and after</title>
<style>body{font-family:sans-serif;margin:24px;color:#222} h1{font-size:20px} p{max-width:1100px}</style></head>
<body><h1>Daily revenue: published, the append mistake, the backfill, the truth</h1>
<p>Measured by <code>make demo</code>: six months published by a model that did not take refunds out, this month by the
fixed model; a re-run of this month with an append strategy doubles it; the backfill (one committed partition swap per
day) brings the six months onto the true line and leaves this month as it was.</p>
<svg xmlns="http://www.w3.org/2000/svg" width="1140" height="560" viewBox="0 0 1140 560" role="img" aria-label="daily revenue">
<rect x="0" y="0" width="1140" height="560" fill="#ffffff"/>
<line x1="70" y1="430" x2="1110" y2="430" stroke="#444"/><line x1="70" y1="40" x2="70" y2="430" stroke="#444"/>
<text x="66" y="44" font-size="11" text-anchor="end">', to_char((SELECT top FROM axis), 'FM999,999,990'), '</text>
<text x="66" y="434" font-size="11" text-anchor="end">0</text>',
(SELECT ticks FROM axis),
(SELECT string_agg(format('<polyline id="series-%s" fill="none" stroke="%s" stroke-width="%s"%s points="%s"/>',
						  id, color, width, CASE WHEN dash <> '' THEN format(' stroke-dasharray="%s"', dash) ELSE '' END, points),
				   E'\n' ORDER BY CASE id WHEN 'truth' THEN 1 WHEN 'published' THEN 2 WHEN 'append' THEN 3 ELSE 4 END) FROM pts),
(SELECT string_agg(format('<line x1="80" y1="%s" x2="110" y2="%s" stroke="%s" stroke-width="%s"/><text x="118" y="%s" font-size="13">%s</text>',
						  470 + k * 20, 470 + k * 20, color, greatest(width, 3), 474 + k * 20, label), '' ORDER BY k)
 FROM (SELECT *, CASE id WHEN 'truth' THEN 0 WHEN 'published' THEN 1 WHEN 'append' THEN 2 ELSE 3 END AS k FROM pts) l),
'
</svg></body></html>');
