(function () {
  "use strict";
  var box = document.getElementById("trace-filters");
  var table = document.getElementById("trace");
  if (!box || !table || !table.tBodies.length) { return; }
  var selects = Array.prototype.slice.call(box.querySelectorAll("select"));
  var shown = document.getElementById("trace-shown");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  function apply() {
    var count = 0;
    rows.forEach(function (row) {
      var keep = selects.every(function (s) { return s.value === "" || row.dataset[s.name] === s.value; });
      row.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = String(count);
  }
  var wanted = new URLSearchParams(window.location.hash.slice(1));
  selects.forEach(function (s) {
    var value = wanted.get(s.name);
    if (value !== null && Array.prototype.some.call(s.options, function (o) { return o.value === value; })) {
      s.value = value;
    }
    s.addEventListener("change", apply);
  });
  box.hidden = false;
  apply();
})();
