// Checks a Qt Quick scene the way a user meets it: every visible control lies inside its window,
// dialog and scroll area (after scrolling to it), is the topmost item where it would be clicked,
// and shows its text whole (not elided unless a tooltip gives it, not running past its box).
#pragma once
#include <QList>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QStringList>

class QQuickItem;
class QQuickWindow;

namespace layoutprobe {

// True for the items a user operates: buttons (tabs, check boxes, delegates), text fields and
// areas, combo boxes, sliders, spin boxes.
bool isInteractive(const QQuickItem *item);
// The item's bounding rectangle in scene coordinates.
QRectF sceneRect(const QQuickItem *item);
// The deepest, topmost item under `scenePoint` that takes mouse input (what a click reaches).
QQuickItem *clickTarget(QQuickItem *root, QPointF scenePoint);

// One scene check under `root` (a page, or a dialog's popup item); each fault is one line that
// names the item (its objectName, type and text) and what is wrong. `context` prefixes each line.
QStringList checkScene(QQuickWindow *window, QQuickItem *root, const QString &context);

}  // namespace layoutprobe
