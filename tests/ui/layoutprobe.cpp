#include "layoutprobe.h"

#include <QQuickItem>
#include <QQuickWindow>
#include <algorithm>
#include <cmath>

namespace layoutprobe {
namespace {

constexpr double kSlack = 1.0;  // pixels: rounding of fractional layouts

bool inherits(const QObject *o, const char *name) { return o->inherits(name); }

bool isFlickable(const QQuickItem *item) { return inherits(item, "QQuickFlickable"); }

QString describe(const QQuickItem *item)
{
    QString text;
    for (const char *name : {"text", "title", "placeholderText", "displayText"}) {
        const QVariant v = item->property(name);
        if (v.isValid() && !v.toString().isEmpty()) {
            text = v.toString();
            break;
        }
    }
    if (text.size() > 48)
        text = text.left(45) + QStringLiteral("...");
    QString out = QString::fromLatin1(item->metaObject()->className());
    if (!item->objectName().isEmpty())
        out += QStringLiteral(" '%1'").arg(item->objectName());
    if (!text.isEmpty())
        out += QStringLiteral(" \"%1\"").arg(text.simplified());
    return out;
}

QString rectText(const QRectF &r)
{
    return QStringLiteral("(%1,%2 %3x%4)").arg(r.x(), 0, 'f', 0).arg(r.y(), 0, 'f', 0).arg(r.width(), 0, 'f', 0).arg(r.height(), 0, 'f', 0);
}

bool opaqueChain(const QQuickItem *item)
{
    for (const QQuickItem *p = item; p; p = p->parentItem())
        if (p->opacity() <= 0.0)
            return false;
    return true;
}

// An interactive ancestor: the item is one of that control's parts (a spin box's text, a combo
// box's label, a button's icon label).
const QQuickItem *interactiveAncestor(const QQuickItem *item)
{
    for (const QQuickItem *p = item->parentItem(); p; p = p->parentItem())
        if (isInteractive(p))
            return p;
    return nullptr;
}

// A ToolTip attached to the item or one of its nearest ancestors that says something: the full
// text of an elided label is then a hover away.
bool hasToolTip(const QQuickItem *item)
{
    int depth = 0;
    for (const QQuickItem *p = item; p && depth < 5; p = p->parentItem(), ++depth) {
        for (const QObject *child : p->children()) {
            if (inherits(child, "QQuickToolTipAttached") && !child->property("text").toString().isEmpty())
                return true;
        }
    }
    return false;
}

// Scrolls every Flickable around `item` (innermost first) so that the item is in its viewport,
// as a user would with the wheel or the scroll bar.
void scrollIntoView(QQuickItem *item)
{
    for (QQuickItem *p = item->parentItem(); p; p = p->parentItem()) {
        if (!isFlickable(p))
            continue;
        auto *content = qvariant_cast<QQuickItem *>(p->property("contentItem"));
        if (!content)
            continue;
        const QRectF r = item->mapRectToItem(content, item->boundingRect());
        const auto scroll = [&](const char *pos, const char *extent, const char *origin, double lo, double hi, double view) {
            const double current = p->property(pos).toDouble();
            const double min = p->property(origin).toDouble();
            const double max = std::max(min, min + p->property(extent).toDouble() - view);
            double target = current;
            if (hi - lo > view || lo < current)
                target = lo;
            else if (hi > current + view)
                target = hi - view;
            target = std::clamp(target, min, max);
            if (std::abs(target - current) > 0.5)
                p->setProperty(pos, target);
        };
        scroll("contentY", "contentHeight", "originY", r.top(), r.bottom(), p->height());
        scroll("contentX", "contentWidth", "originX", r.left(), r.right(), p->width());
    }
}

void collect(QQuickItem *item, QList<QQuickItem *> &out)
{
    if (!item->isVisible())
        return;
    out.append(item);
    for (QQuickItem *child : item->childItems())
        collect(child, out);
}

}  // namespace

bool isInteractive(const QQuickItem *item)
{
    for (const char *type : {"QQuickAbstractButton", "QQuickComboBox", "QQuickSlider", "QQuickSpinBox",
                             "QQuickTextField", "QQuickTextArea", "QQuickRangeSlider"})
        if (inherits(item, type))
            return true;
    return false;
}

QRectF sceneRect(const QQuickItem *item)
{
    return item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
}

QQuickItem *clickTarget(QQuickItem *root, QPointF scenePoint)
{
    if (!root->isVisible() || !root->isEnabled() && !isInteractive(root))
        return nullptr;
    const bool inside = sceneRect(root).contains(scenePoint);
    if (root->clip() && !inside)
        return nullptr;
    // Children on top first: higher z, then later in the list.
    QList<QQuickItem *> children = root->childItems();
    std::stable_sort(children.begin(), children.end(), [](QQuickItem *a, QQuickItem *b) { return a->z() < b->z(); });
    for (auto it = children.crbegin(); it != children.crend(); ++it) {
        if (QQuickItem *hit = clickTarget(*it, scenePoint))
            return hit;
    }
    if (inside && root->opacity() > 0 && (root->acceptedMouseButtons() != Qt::NoButton || isInteractive(root)))
        return root;
    return nullptr;
}

QStringList checkScene(QQuickWindow *window, QQuickItem *root, const QString &context)
{
    QStringList faults;
    const QRectF windowRect(0, 0, window->width(), window->height());
    QList<QQuickItem *> items;
    collect(root, items);
    for (QQuickItem *item : items) {
        if (item->width() <= 0 || item->height() <= 0 || !opaqueChain(item))
            continue;
        const bool interactive = isInteractive(item) && !interactiveAncestor(item);
        const bool text = inherits(item, "QQuickText");
        const bool readOnlyInput = inherits(item, "QQuickTextInput") && item->property("readOnly").toBool();
        if (!interactive && !text && !readOnlyInput)
            continue;
        // Text inside a control is checked for elision only; the control is checked as a whole.
        const bool part = !interactive && interactiveAncestor(item);
        const QString what = context + QStringLiteral(": ") + describe(item);

        if (text) {
            const bool wraps = item->property("wrapMode").toInt() != 0;
            if (item->property("truncated").toBool() && !hasToolTip(item))
                faults << what + QStringLiteral(" is elided (no tooltip gives the whole text)");
            else if (!wraps && item->property("elide").toInt() == 0 && !item->property("text").toString().isEmpty()
                     && item->implicitWidth() > item->width() + kSlack)
                faults << what + QStringLiteral(" runs past its box (%1 of %2 px)").arg(item->implicitWidth(), 0, 'f', 0).arg(item->width(), 0, 'f', 0);
        }
        if (readOnlyInput && item->property("contentWidth").toDouble() > item->width() + kSlack)
            faults << what + QStringLiteral(" is cut off (%1 of %2 px)").arg(item->property("contentWidth").toDouble(), 0, 'f', 0).arg(item->width(), 0, 'f', 0);
        if (part)
            continue;

        scrollIntoView(item);
        const QRectF r = sceneRect(item);
        // Inside the window, and inside each clipping ancestor (a scroll area's viewport, a dialog).
        const auto outside = [&](const QRectF &box) {
            // An item taller than its viewport is in view when it fills it.
            const QRectF need = r.height() > box.height() ? QRectF(r.x(), box.y(), r.width(), box.height()) : r;
            return need.left() < box.left() - kSlack || need.right() > box.right() + kSlack
                   || need.top() < box.top() - kSlack || need.bottom() > box.bottom() + kSlack;
        };
        if (outside(windowRect)) {
            faults << what + QStringLiteral(" lies outside the window %1").arg(rectText(r));
            continue;
        }
        bool clipped = false;
        for (QQuickItem *p = item->parentItem(); p && !clipped; p = p->parentItem()) {
            if ((p->clip() || isFlickable(p) || inherits(p, "QQuickPopupItem")) && outside(sceneRect(p))) {
                faults << what + QStringLiteral(" lies outside %1 %2").arg(describe(p), rectText(r));
                clipped = true;
            }
        }
        if (clipped || !interactive)
            continue;
        // Clicking its middle reaches it, not something drawn over it.
        QQuickItem *hit = clickTarget(window->contentItem()->parentItem() ? window->contentItem()->parentItem() : window->contentItem(), r.center());
        if (hit != item && !(hit && item->isAncestorOf(hit)))
            faults << what + QStringLiteral(" is covered by %1").arg(hit ? describe(hit) : QStringLiteral("nothing clickable"));
    }
    return faults;
}

}  // namespace layoutprobe
