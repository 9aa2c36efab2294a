"""What is drawn, analysed and reported of a graph: render, concept map, analytics, report, export, evaluation."""
