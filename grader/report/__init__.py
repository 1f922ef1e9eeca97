"""Report: the table and results.json (report.py), report.html (report_html.py, charts.py), student text made safe to
print (text.py)."""
