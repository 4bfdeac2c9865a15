// RemoteEndpointsPanel: the form opens and closes, Add is enabled only with a name and an
// address, what the typed address would get is shown while typing (the plain-HTTP note, the
// refusal), an added endpoint is listed from the model (with " · API key" when it has one) and
// Remove takes it out again; a refused address keeps the form open with the reason.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 800
    height: 600

    Component { id: panelComponent; RemoteEndpointsPanel { width: 700; endpoints: testEndpoints } }

    function find(item, pred) {
        if (pred(item)) return item
        for (let i = 0; i < item.children.length; ++i) {
            const f = find(item.children[i], pred)
            if (f) return f
        }
        if (item.contentItem && item.contentItem !== item) {
            const f = find(item.contentItem, pred)
            if (f) return f
        }
        return null
    }
    function findAll(item, pred, out) {
        if (pred(item)) out.push(item)
        for (let i = 0; i < item.children.length; ++i) findAll(item.children[i], pred, out)
        return out
    }

    TestCase {
        name: "RemoteEndpointsPanel"
        when: windowShown

        function init() {
            while (testEndpoints.rowCount() > 0)
                testEndpoints.remove(0)
        }
        function make() {
            const p = createTemporaryObject(panelComponent, root, {})
            verify(p)
            waitForRendering(p)
            return p
        }
        function button(p, text) { return root.find(p, i => i instanceof Button && i.text === text) }
        // Clicks a button once the layouts around it have placed it (it may have just appeared).
        function click(button) {
            verify(button && button.visible)
            for (let q = button.parent; q; q = q.parent)
                waitForItemPolished(q)
            mouseClick(button)
        }
        function field(p, accessibleName) {
            return root.find(p, i => i instanceof TextField && i.Accessible.name === accessibleName)
        }
        function visibleLabels(p) {
            return root.findAll(p, i => i instanceof Label && i.visible && i.text.length > 0, []).map(l => l.text)
        }
        function openForm(p) {
            const form = findChild(p, "endpointForm")
            verify(!form.visible)
            click(button(p, "Add remote endpoint…"))
            verify(form.visible)
            verify(button(p, "Cancel"))
            return form
        }

        function test_formOpensAndCloses() {
            const p = make()
            const form = openForm(p)
            click(button(p, "Cancel"))
            verify(!form.visible)
            verify(button(p, "Add remote endpoint…"))
        }

        function test_addNeedsANameAndAnAddress() {
            const p = make()
            openForm(p)
            const add = button(p, "Add endpoint")
            verify(!add.enabled)
            field(p, "Endpoint name").text = "Lab"
            verify(!add.enabled)
            field(p, "Endpoint base URL").text = "http://127.0.0.1:9"
            verify(add.enabled)
            field(p, "Endpoint name").text = ""
            verify(!add.enabled)
        }

        function test_typedAddressIsChecked() {
            const p = make()
            openForm(p)
            const url = field(p, "Endpoint base URL")
            url.text = "ftp://example.org"
            verify(visibleLabels(p).indexOf("Only https:// and http:// addresses are supported.") >= 0, visibleLabels(p))
            url.text = "http://192.168.1.20:5001/v1"
            verify(visibleLabels(p).indexOf("Plain HTTP: messages and the API key travel unencrypted on the local network.") >= 0,
                   visibleLabels(p))
            url.text = "https://example.org/v1"
            verify(visibleLabels(p).every(t => t.indexOf("Plain HTTP") < 0 && t.indexOf("Only https") < 0), visibleLabels(p))
            // Where a typed key would be kept.
            verify(visibleLabels(p).indexOf(testEndpoints.keyWarning) < 0)
            field(p, "API key (optional)").text = "sk-test"
            verify(visibleLabels(p).indexOf(testEndpoints.keyWarning) >= 0)
        }

        function test_addListsAndRemoveTakesOut() {
            const p = make()
            const form = openForm(p)
            field(p, "Endpoint name").text = "Lab server"
            field(p, "Endpoint base URL").text = "http://127.0.0.1:9"
            field(p, "API key (optional)").text = "sk-test"
            click(button(p, "Add endpoint"))
            compare(findChild(p, "addError").text, "")
            verify(!form.visible)
            compare(testEndpoints.rowCount(), 1)
            // The row, from the model: the name (with the key marker), the base URL with /v1, the note.
            const shown = visibleLabels(p)
            verify(shown.indexOf("Lab server · API key") >= 0, shown)
            verify(shown.indexOf("http://127.0.0.1:9/v1") >= 0, shown)
            verify(shown.indexOf("Plain HTTP: messages and the API key travel unencrypted on the local network.") >= 0, shown)
            // The form was cleared for the next one.
            click(button(p, "Add remote endpoint…"))
            compare(field(p, "Endpoint name").text, "")
            compare(field(p, "Endpoint base URL").text, "")
            compare(field(p, "API key (optional)").text, "")
            click(button(p, "Cancel"))

            // Edit: the form shows the endpoint; a new name is kept, the key stays.
            click(button(p, "Edit"))
            verify(form.visible)
            compare(field(p, "Endpoint name").text, "Lab server")
            compare(field(p, "Endpoint base URL").text, "http://127.0.0.1:9/v1")
            compare(field(p, "API key (optional)").text, "")
            field(p, "Endpoint name").text = "Lab"
            click(button(p, "Save endpoint"))
            compare(findChild(p, "addError").text, "")
            verify(!form.visible)
            compare(testEndpoints.rowCount(), 1)
            verify(visibleLabels(p).indexOf("Lab · API key") >= 0, visibleLabels(p))

            // Remove asks first: Keep keeps it, Remove removes it.
            const remove = button(p, "Remove")
            verify(remove)
            click(remove)
            const confirm = p.confirmRemoveDialog
            tryVerify(() => confirm.opened)
            confirm.reject()
            tryVerify(() => !confirm.visible)
            compare(testEndpoints.rowCount(), 1)
            click(remove)
            tryVerify(() => confirm.opened)
            confirm.accept()
            tryVerify(() => !confirm.visible)
            compare(testEndpoints.rowCount(), 0)
            verify(visibleLabels(p).indexOf("Lab · API key") < 0)
        }

        function test_refusedAddressKeepsTheForm() {
            const p = make()
            const form = openForm(p)
            field(p, "Endpoint name").text = "Far away"
            field(p, "Endpoint base URL").text = "http://example.org/v1"
            click(button(p, "Add endpoint"))
            const error = findChild(p, "addError")
            verify(error.visible)
            compare(error.text, "Plain HTTP is allowed only for loopback and private network addresses; use https:// for example.org.")
            verify(form.visible)
            compare(testEndpoints.rowCount(), 0)
            // Cancelling clears the reason.
            click(button(p, "Cancel"))
            compare(error.text, "")
            verify(!error.visible)
        }
    }
}
