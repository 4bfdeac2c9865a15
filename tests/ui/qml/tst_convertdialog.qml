// ConvertDialog: opens on EXL3 with Convert disabled and the reason shown; the controls write the
// job's settings (format, head bits, device, fast, bits); the format switches the bits' range, the
// head-bit choices and the EXL2-only options; a bad input path names the problem; Close closes.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 900
    height: 800

    Component { id: dialogComponent; ConvertDialog {} }

    function byName(item, name) {
        if (item.objectName === name) return item
        for (let i = 0; i < item.children.length; ++i) {
            const f = byName(item.children[i], name)
            if (f) return f
        }
        if (item.contentItem && item.contentItem !== item) {
            const f = byName(item.contentItem, name)
            if (f) return f
        }
        return null
    }
    function button(d, name) {
        for (let i = 0; i < d.footer.count; ++i)
            if (d.footer.itemAt(i).objectName === name) return d.footer.itemAt(i)
        return null
    }

    TestCase {
        name: "ConvertDialog"
        when: windowShown

        function openDialog() {
            const d = createTemporaryObject(dialogComponent, root, {})
            verify(d)
            d.open()
            tryCompare(d, "opened", true)
            return d
        }

        function test_startsDisabledWithTheReason() {
            const d = openDialog()
            compare(d.title, "Convert a model to EXL3 or EXL2")
            compare(d.job.format, "exl3")
            compare(byName(d.contentItem, "formatBox").currentIndex, 0)
            verify(!byName(d.contentItem, "fastBox").visible)  // EXL2 only
            verify(!button(d, "convertButton").enabled)
            verify(!button(d, "cancelButton").enabled)
            verify(button(d, "closeButton").enabled)
            const reason = byName(d.contentItem, "settingsError")
            verify(reason.visible)
            verify(reason.text.indexOf("Choose the model") === 0, reason.text)
            verify(!byName(d.contentItem, "progressBar").visible)
        }

        function test_controlsWriteTheSettings() {
            const d = openDialog()
            const head = byName(d.contentItem, "headBitsBox")
            compare(head.currentText, "6")
            compare(head.count, 9)
            head.currentIndex = 8
            head.activated(8)
            compare(d.job.headBits, 16)
            compare(head.currentText, "16 (FP16, not quantized)")
            const device = byName(d.contentItem, "deviceBox")
            compare(device.currentIndex, 0)
            device.activated(2)
            compare(d.job.device, "cpu")
            const format = byName(d.contentItem, "formatBox")
            format.currentIndex = 1
            format.activated(1)
            compare(d.job.format, "exl2")
            const fast = byName(d.contentItem, "fastBox")
            tryCompare(fast, "visible", true)
            verify(!fast.checked)
            mouseClick(fast)
            verify(d.job.fast)
            d.job.bits = 4.25
            compare(byName(d.contentItem, "bitsSlider").valueText, "4.25")
        }

        function test_formatSwitchesRangesAndChoices() {
            const d = openDialog()
            const format = byName(d.contentItem, "formatBox")
            const slider = byName(d.contentItem, "bitsSlider")
            const head = byName(d.contentItem, "headBitsBox")
            const note = byName(d.contentItem, "formatNote")
            compare(slider.from, 1.0)
            compare(slider.to, 8.0)
            verify(note.text.indexOf("250") >= 0 && note.text.indexOf("2048") >= 0, note.text)
            d.job.bits = 1.5
            d.job.headBits = 7
            compare(head.currentText, "7")
            format.activated(1)
            compare(d.job.format, "exl2")
            compare(format.currentIndex, 1)
            compare(slider.from, 2.0)
            compare(slider.to, 8.5)
            compare(d.job.bits, 2.0)
            compare(slider.valueText, "2.00")
            compare(head.count, 6)
            compare(d.job.headBits, 6)  // 7 is no EXL2 choice
            compare(head.currentText, "6")
            verify(note.text.indexOf("512") >= 0, note.text)
            verify(byName(d.contentItem, "fastBox").visible)
            head.activated(5)
            compare(d.job.headBits, 8)
            format.activated(0)
            compare(d.job.format, "exl3")
            compare(head.count, 9)
            compare(d.job.headBits, 8)  // an EXL3 choice too: kept
            compare(head.currentText, "8")
            compare(slider.from, 1.0)
            verify(!byName(d.contentItem, "fastBox").visible)
        }

        function test_exl3RefusesTheGpu() {
            const d = openDialog()
            d.job.input = "/"
            d.job.output = "/nonexistent/out-exl3"
            compare(d.job.settingsError, "")
            verify(button(d, "convertButton").enabled)
            byName(d.contentItem, "deviceBox").activated(1)
            compare(d.job.device, "cuda")
            const reason = byName(d.contentItem, "settingsError")
            verify(reason.visible)
            verify(reason.text.indexOf("CPU") > 0, reason.text)
            verify(!button(d, "convertButton").enabled)
            byName(d.contentItem, "formatBox").activated(1)
            compare(d.job.settingsError, "")
        }

        function test_badInputNamesTheProblem() {
            const d = openDialog()
            const input = byName(d.contentItem, "inputField")
            input.text = "/nonexistent/model"
            input.editingFinished()
            compare(d.job.input, "/nonexistent/model")
            const reason = byName(d.contentItem, "settingsError")
            verify(reason.text.indexOf("does not exist") > 0, reason.text)
            verify(!button(d, "convertButton").enabled)
        }

        function test_closes() {
            const d = openDialog()
            mouseClick(button(d, "closeButton"))
            tryCompare(d, "visible", false)
        }
    }
}
