"""Objects found by name, as Keras 2 finds them: one :class:`Registry` per kind.

Activations, initializers, regularizers, constraints, losses, metrics,
optimizers, learning-rate schedules and layers each keep a Registry of their
names. A Registry gives Keras's three functions one behaviour for all kinds:

- ``get(identifier)``: None (what it means depends on the kind), a name, a
  ``{'class_name': ..., 'config': ...}`` dict, or an object used as it is.
- ``serialize(obj)``: an object with ``get_config`` as such a dict, a
  function as its name.
- ``deserialize(config, custom_objects=None)``: back from a name or a dict.

A name is looked up in the ``custom_objects`` of the call, then in the
process-wide custom objects (:func:`get_custom_objects`, extended for a while
by :func:`custom_object_scope`), then among the kind's own names. A name of
a class gives a new instance with the default arguments; a name of a function
gives the function. Nothing else is ever built: a saved file names classes,
it never carries code.
"""

_custom_objects = {}


def get_custom_objects():
    """The process-wide dict of your own objects by name, seen by every kind.

    Add to it to make a name known everywhere, as in Keras::

        get_custom_objects()['swish2'] = my_swish
        Dense(8, activation='swish2')
    """
    return _custom_objects


class CustomObjectScope:
    """Within this context, the given objects are found by name by every kind.

    Args:
        *custom_objects: Dicts of objects by name (None is ignored); later
            ones win. Leaving the context restores the custom objects as
            they were on entering it.
    """

    def __init__(self, *custom_objects):
        for objects in custom_objects:
            if objects is not None and not isinstance(objects, dict):
                raise TypeError(f'custom objects must be dicts of objects by name, got '
                                f'{objects!r:.200}')
        self.custom_objects = [objects for objects in custom_objects if objects]
        self._saved = []

    def __enter__(self):
        self._saved.append(dict(_custom_objects))
        for objects in self.custom_objects:
            _custom_objects.update(objects)
        return self

    def __exit__(self, *exception):
        _custom_objects.clear()
        _custom_objects.update(self._saved.pop())


def custom_object_scope(*custom_objects):
    """A :class:`CustomObjectScope`: ``with custom_object_scope({'MyLayer': MyLayer}): ...``."""
    return CustomObjectScope(*custom_objects)


class Registry:
    """The names of one kind of object, and Keras's get / serialize / deserialize over them.

    Args:
        kind: What the objects are, for messages ('initializer').
        base: The kind's base class: its instances pass through ``get``, and
            a dict may only build a subclass of it. None accepts any class,
            and any object (only callables where ``functions`` is true).
        functions: Whether plain functions (and callable objects) are
            objects of this kind, passed through ``get`` and named by ``serialize``.
        case_sensitive: False matches the kind's own names ignoring case
            (Keras 2's optimizers); custom objects always match exactly.
        none: What ``get(None)`` returns; :attr:`REFUSED` makes it an error.
    """

    REFUSED = object()

    def __init__(self, kind, base=None, functions=True, case_sensitive=True, none=None):
        self.kind = kind
        self.base = base
        self.functions = functions
        self.case_sensitive = case_sensitive
        self.none = none
        self._objects = {}  # key (lowered when case-insensitive) -> object
        self._names = {}  # key -> the name as registered, in registration order
        self._factories = []  # functions that build an object from a config

    # ----- names -------------------------------------------------------------

    def register(self, obj, *names, factory=False):
        """Make ``obj`` known under ``names`` (default: its ``__name__``); returns ``obj``.

        Args:
            factory: ``obj`` is a function that makes an object from keyword
                arguments (Keras 2's ``l1_l2``): a name or dict calls it,
                where a plain function would be returned as it is.

        Raises:
            ValueError: If a name is already taken by another object.
        """
        for name in names or (obj.__name__,):
            key = self._key(name)
            if self._objects.get(key, obj) is not obj:
                raise ValueError(f'the {self.kind} name {name!r} is already taken by '
                                 f'{self._objects[key]!r}')
            self._objects[key] = obj
            self._names.setdefault(key, name)
        if factory:
            self._factories.append(obj)
        return obj

    def names(self):
        """The kind's own names, in the order they were registered."""
        return list(self._names.values())

    def __iter__(self):
        return iter(self.names())

    def __contains__(self, name):
        return isinstance(name, str) and self._key(name) in self._objects

    def lookup(self, name, custom_objects=None, what=''):
        """The object called ``name``: in ``custom_objects``, the custom objects, or the own names.

        Args:
            what: Inserted in the message ('class' gives "unknown layer class 'X'").

        Raises:
            ValueError: For an unknown name; the message lists the known ones.
        """
        if not isinstance(name, str):
            raise TypeError(f'a {self.kind} name must be a string, got {name!r:.200}')
        for objects in (custom_objects or {}, _custom_objects):
            if name in objects:
                return objects[name]
        found = self._objects.get(self._key(name))
        if found is None:
            label = f'{self.kind} {what}'.strip()
            raise ValueError(f'unknown {label} {name!r}; known: {", ".join(self.names())} '
                             f'(pass your own in custom_objects={{{name!r}: ...}})')
        return found

    def lookup_function(self, name, custom_objects=None):
        """The function called ``name`` (a wrapper's saved ``fn``), found as by :meth:`lookup`.

        Raises:
            ValueError: If the name is unknown or names a class.
        """
        found = self.lookup(name, custom_objects, 'function')
        if isinstance(found, type) or not callable(found):
            raise ValueError(f'{name!r} is not {_article(self.kind)} function: {found!r:.200}')
        return found

    def _key(self, name):
        return name if self.case_sensitive else name.lower()

    # ----- Keras's three functions --------------------------------------------

    def get(self, identifier):
        """The object for None, a name, a ``{'class_name', 'config'}`` dict, or an object.

        Raises:
            ValueError: For an unknown name.
            TypeError: For anything that is not an object of this kind.
        """
        if identifier is None and self.none is not Registry.REFUSED:
            return self.none
        if isinstance(identifier, (str, dict)):
            return self.deserialize(identifier)
        if self._is_object(identifier):
            return identifier
        raise TypeError(f'cannot interpret {identifier!r:.200} as {_article(self.kind)}; give '
                        f'{self._forms()}')

    def serialize(self, obj):
        """``obj`` as ``{'class_name', 'config'}`` (given ``get_config``), a function as its name.

        None gives None.

        Raises:
            TypeError: For something that is neither.
        """
        if obj is None:
            return None
        if self._is_object(obj) and hasattr(obj, 'get_config'):
            return {'class_name': type(obj).__name__, 'config': obj.get_config()}
        if self.functions and callable(obj) and hasattr(obj, '__name__'):
            return obj.__name__
        raise TypeError(f'cannot serialize {obj!r:.200} as {_article(self.kind)}')

    def deserialize(self, config, custom_objects=None):
        """The object a name or a ``{'class_name', 'config'}`` dict stands for.

        A class (or factory) is built, with ``from_config(config)`` where it
        has one, inside a :func:`custom_object_scope` of ``custom_objects``
        so that names in its config are found too. A function is returned as
        it is (from a dict, only with an empty config).

        Raises:
            ValueError: For an unknown name, or a config the class refuses.
            TypeError: For a config of another form.
        """
        if isinstance(config, str):
            found = self.lookup(config, custom_objects)
            return self._build(found, config, {}, custom_objects) if self._builds(found) \
                else found
        if not (isinstance(config, dict) and isinstance(config.get('class_name'), str)):
            raise TypeError(f'{_article(self.kind)} config is a name or a dict with '
                            f"'class_name' and 'config', got {config!r:.200}")
        name, arguments = config['class_name'], config.get('config', {})
        if not isinstance(arguments, dict):
            raise ValueError(f"the 'config' of the {self.kind} {name!r} must be a dict, got "
                             f'{arguments!r:.200}')
        found = self.lookup(name, custom_objects, 'class')
        if self._builds(found):
            return self._build(found, name, arguments, custom_objects)
        if self.functions and callable(found) and not isinstance(found, type) and not arguments:
            return found
        raise ValueError(f'{name!r} is not {_article(self.kind)} class: {found!r:.200}')

    # ----- details -------------------------------------------------------------

    def _is_object(self, obj):
        if isinstance(obj, type):
            return False
        if self.functions and callable(obj):
            return True
        return isinstance(obj, self.base) if self.base is not None else not self.functions

    def _builds(self, found):
        if any(found is factory for factory in self._factories):
            return True
        return isinstance(found, type) and (self.base is None or issubclass(found, self.base))

    def _build(self, cls, name, arguments, custom_objects):
        with CustomObjectScope(custom_objects):
            try:
                if hasattr(cls, 'from_config'):
                    return cls.from_config(dict(arguments))
                return cls(**arguments)
            except TypeError as error:
                raise ValueError(f'cannot make the {self.kind} {name!r} from its config '
                                 f'{arguments!r:.200}: {error}') from error

    def _forms(self):
        forms = ['a name', "a {'class_name', 'config'} dict", f'{_article(self.kind)} object']
        if self.functions:
            forms.append('a function')
        if self.none is not Registry.REFUSED:
            forms.append('None')
        return ', '.join(forms[:-1]) + ' or ' + forms[-1]


def _article(noun):
    return ('an ' if noun[0] in 'aeiou' else 'a ') + noun
