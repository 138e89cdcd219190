#pragma once
// Fuzz builds only: clang 14 cannot use libstdc++ 12's <expected> (it needs
// C++20 conditionally trivial special members, clang 16+). This supplies the
// part of std::expected that the parser code uses, force-included with
// -include when the library has none. Never used by the gcc build.

#include <version>

#if !defined(__cpp_lib_expected)
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace std {

template <typename E>
class unexpected {
 public:
  explicit unexpected(E error) : m_error(std::move(error)) {}
  const E& error() const& { return m_error; }
  E& error() & { return m_error; }
  E&& error() && { return std::move(m_error); }

 private:
  E m_error;
};

template <typename E>
unexpected(E) -> unexpected<E>;

template <typename T, typename E>
class expected {
 public:
  expected() requires std::is_default_constructible_v<T> : m_value(std::in_place_index<0>) {}
  template <typename U = T>
  requires std::is_constructible_v<T, U&&> &&
      (!std::is_same_v<std::remove_cvref_t<U>, expected>)&&(!std::is_same_v<std::remove_cvref_t<U>, unexpected<E>>)
          expected(U&& value)
      : m_value(std::in_place_index<0>, std::forward<U>(value)) {}
  template <typename G>
  expected(const unexpected<G>& error) : m_value(std::in_place_index<1>, error.error()) {}
  template <typename G>
  expected(unexpected<G>&& error) : m_value(std::in_place_index<1>, std::move(error).error()) {}

  bool has_value() const { return m_value.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& operator*() & { return std::get<0>(m_value); }
  const T& operator*() const& { return std::get<0>(m_value); }
  T&& operator*() && { return std::get<0>(std::move(m_value)); }
  T* operator->() { return &std::get<0>(m_value); }
  const T* operator->() const { return &std::get<0>(m_value); }
  T& value() & { return std::get<0>(m_value); }
  const E& error() const& { return std::get<1>(m_value); }
  E& error() & { return std::get<1>(m_value); }

 private:
  std::variant<T, E> m_value;
};

// expected<void, E>: success, or an error (the snapshot bounds' checks).
template <typename E>
class expected<void, E> {
 public:
  expected() = default;
  template <typename G>
  expected(const unexpected<G>& error) : m_error(error.error()) {}
  template <typename G>
  expected(unexpected<G>&& error) : m_error(std::move(error).error()) {}

  bool has_value() const { return !m_error.has_value(); }
  explicit operator bool() const { return has_value(); }
  const E& error() const& { return *m_error; }
  E& error() & { return *m_error; }

 private:
  std::optional<E> m_error;
};

}  // namespace std
#endif
