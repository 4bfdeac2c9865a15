// Sizes and numbers as the interface language writes them: GiB from one GiB up, MiB below (a
// 135M-parameter model is 61 MiB, not "0.0 GiB").
pragma Singleton
import QtQuick

QtObject {
    function number(value, decimals) { return Number(value).toLocaleString(Qt.locale(), "f", decimals) }
    // `gib` in GiB; `decimals` for GiB (MiB are whole).
    function size(gib, decimals) {
        return gib >= 0.95 || gib === 0 ? qsTr("%1 GiB").arg(number(gib, decimals === undefined ? 1 : decimals))
                                        : qsTr("%1 MiB").arg(number(gib * 1024, 0))
    }
    // A date from C++ (a QDate) that is set: the Hub leaves some repositories' dates out.
    function dateKnown(date) { return date instanceof Date && !isNaN(date.getTime()) }
}
