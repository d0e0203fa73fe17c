// The special functions the elementwise functors share (kernels/special_functions.h), on the
// host in float and double: against 20-digit references (mpmath) where torch 1.13's own values
// are off (Bessel J, Y and Airy Ai), and by the identities that tie them together (Wronskians,
// scalings, inverses, the polynomials' closed and trigonometric forms), so that each branch of
// each approximation is checked by something other than itself. Needs no GPU: the functions
// are host/device code, the same ones the CUDA kernels run.
#include "engine/kernels/special_functions.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

constexpr double kPi = 3.14159265358979323846;

double Rel(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

struct Reference {
  std::string name;
  double x, value;
};

// mpmath at 30 digits (airyai, besselj, bessely), rounded to 20.
const Reference kReferences[] = {
    {"AiryAi", -50.0, -1.6188142361232092392e-1}, {"AiryAi", -10.0, 4.0241238486443190689e-2},
    {"AiryAi", -3.0, -3.7881429367765807435e-1},  {"AiryAi", -2.1, 1.6348451299929267887e-1},
    {"AiryAi", -1.0, 5.355608832923521188e-1},    {"AiryAi", 0.0, 3.5502805388781723926e-1},
    {"AiryAi", 1.0, 1.3529241631288141552e-1},    {"AiryAi", 2.1, 2.9952602115866522488e-2},
    {"AiryAi", 5.0, 1.0834442813607441735e-4},    {"AiryAi", 9.0, 2.4711684308724898433e-9},
    {"AiryAi", 50.0, 4.5849417240748284783e-104}, {"BesselJ0", 0.3, 9.7762624653829608922e-1},
    {"BesselJ0", 4.9, -2.0973832758532620295e-1}, {"BesselJ0", 5.2, -1.1029043979098647865e-1},
    {"BesselJ0", 30.0, -8.6367983581040211336e-2}, {"BesselJ0", 1000.0, 2.4786686152420174561e-2},
    {"BesselJ1", -0.3, -1.4831881627310400238e-1}, {"BesselJ1", 4.9, -3.146946710151906549e-1},
    {"BesselJ1", 5.2, -3.4322300587192191108e-1}, {"BesselJ1", 30.0, -1.1875106261662293652e-1},
    {"BesselY0", 0.3, -8.0727357780451949121e-1}, {"BesselY0", 4.9, -2.9205459424401422492e-1},
    {"BesselY0", 5.2, -3.3125093481988441069e-1}, {"BesselY0", 30.0, -1.1729573168666402525e-1},
    {"BesselY1", 0.3, -2.2931051383885291231},    {"BesselY1", 4.9, 1.8124669204504856286e-1},
    {"BesselY1", 5.2, 7.9190342982084299657e-2},  {"BesselY1", 30.0, 8.4425570661747234891e-2},
};

template <typename C>
C Evaluate(const std::string& name, C x) {
  if (name == "AiryAi") return AiryAi<C>(x);
  if (name == "BesselJ0") return BesselJ0<C>(x);
  if (name == "BesselJ1") return BesselJ1<C>(x);
  if (name == "BesselY0") return BesselY0<C>(x);
  return BesselY1<C>(x);
}

TEST(SpecialFunctionsTest, BesselAndAiryMatchHighPrecisionReferences) {
  for (const Reference& r : kReferences) {
    // Cephes' Airy function is good to a few 1e-14 where it oscillates.
    const double tol = r.name == "AiryAi" ? 1e-13 : 2e-14;
    EXPECT_LT(Rel(Evaluate<double>(r.name, r.x), r.value), tol) << r.name << "(" << r.x << ")";
    if (std::fabs(r.value) > 1e-30) {  // float's range
      EXPECT_LT(Rel(Evaluate<float>(r.name, static_cast<float>(r.x)), r.value), 2e-5)
          << r.name << "(" << r.x << ") in float";
    }
  }
}

TEST(SpecialFunctionsTest, WronskiansHoldOnEveryBranch) {
  // J1 Y0 - J0 Y1 = 2 / (pi x); I0 K1 + I1 K0 = 1 / x: both sides of 2, 5 and 8.
  for (double x = 0.05; x < 60; x *= 1.17) {
    const double w = BesselJ1(x) * BesselY0(x) - BesselJ0(x) * BesselY1(x);
    EXPECT_LT(Rel(w, 2 / (kPi * x)), 1e-13) << x;
    if (x < 600) {
      const double v = BesselI0(x) * BesselK1(x, false) + BesselI1(x) * BesselK0(x, false);
      EXPECT_LT(Rel(v, 1 / x), 1e-13) << x;
    }
  }
}

TEST(SpecialFunctionsTest, ScaledFormsAreTheScaledFunctions) {
  for (double x : {-30.0, -8.5, -7.9, -1.0, -1e-3, 0.0, 1e-3, 0.5, 1.9, 2.1, 7.9, 8.1, 30.0}) {
    EXPECT_LT(std::fabs(BesselI0e(x) - BesselI0(x) * std::exp(-std::fabs(x))),
              1e-15 * BesselI0e(x)) << x;
    EXPECT_LE(std::fabs(BesselI1e(x) - BesselI1(x) * std::exp(-std::fabs(x))),
              1e-15 * std::fabs(BesselI1e(x))) << x;
    EXPECT_EQ(std::signbit(BesselI1(x)), std::signbit(x)) << x;  // odd
    if (x > 0) {
      EXPECT_LT(Rel(BesselK0(x, true), BesselK0(x, false) * std::exp(x)), 1e-15) << x;
      EXPECT_LT(Rel(BesselK1(x, true), BesselK1(x, false) * std::exp(x)), 1e-15) << x;
    }
  }
  // Large arguments: the scaled forms stay finite where the plain ones overflow or vanish.
  EXPECT_TRUE(std::isinf(BesselI0(800.0)));
  EXPECT_LT(Rel(BesselI0e(800.0), 1 / std::sqrt(2 * kPi * 800.0) * (1 + 1 / (8 * 800.0))), 1e-6);
  EXPECT_EQ(BesselK0(800.0, false), 0.0);
  EXPECT_LT(Rel(BesselK0(800.0, true), std::sqrt(kPi / (2 * 800.0)) * (1 - 1 / (8 * 800.0))),
            1e-6);
  // Domain ends.
  EXPECT_EQ(BesselK0(0.0, false), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(BesselK1(-1.0, true)));
  EXPECT_EQ(BesselY0(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(BesselY1(-0.5)));
}

TEST(SpecialFunctionsTest, ErfcxLogNdtrAndNdtriAgreeWithTheirDefinitions) {
  for (double x = -26.0; x < 26.0; x += 0.37) {
    const long double xl = x;
    const long double e = std::exp(xl * xl) * std::erfc(xl);
    EXPECT_LT(Rel(Erfcx(x), static_cast<double>(e)), 1e-14) << x;
    // log ndtr in long double, by log1p where ndtr is near 1.
    const long double t = xl / std::sqrt(2.0L);
    const long double log_ndtr = x > -1 ? std::log1p(-0.5L * std::erfc(t))
                                        : std::log(0.5L * std::erfc(-t));
    if (x > -20) {  // beyond 5, -erfc(t) / 2 itself: libm's erfc in its tail sets the error
      EXPECT_LT(Rel(LogNdtr(x), static_cast<double>(log_ndtr)), x > 5 ? 3e-13 : 1e-14) << x;
    }
    // ndtri inverts ndtr (where ndtr itself is well conditioned: x <= 1/2).
    const double ndtr = static_cast<double>(0.5L * std::erfc(-t));
    if (x <= 0.5 && ndtr > 1e-300) {
      EXPECT_LT(std::fabs(Ndtri(ndtr) - x), 1e-13 * std::fabs(x) + 1e-14) << x;
    }
  }
  // The continued fraction beyond 25 against the asymptotic series.
  for (double x : {25.5, 40.0, 1e3, 1e8}) {
    const double z = 1 / (2 * x * x);
    const double series = (1 - z + 3 * z * z - 15 * z * z * z) / (x * std::sqrt(kPi));
    EXPECT_LT(Rel(Erfcx(x), series), 1e-8 * (x < 30 ? 1 : 1e-3)) << x;
  }
  EXPECT_EQ(Erfcx(std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(Erfcx(-30.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(Erfcx(std::nan(""))));
  EXPECT_EQ(Ndtri(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Ndtri(1.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(Ndtri(1.5)));
  EXPECT_LT(Rel(LogNdtr(-40.0), -804.60844201375379), 1e-14);  // log(ndtr(-40)), mpmath
  EXPECT_LT(Rel(static_cast<double>(Erfcx(3.0f)), Erfcx(3.0)), 1e-7);
}

TEST(SpecialFunctionsTest, PolynomialsMatchTheirClosedAndTrigonometricForms) {
  for (double x : {-0.95, -0.6, -0.2, 0.0, 0.1, 0.45, 0.8, 0.99}) {
    const double t = std::acos(x);
    for (int64_t n = 0; n <= 30; ++n) {
      const double tol = 1e-12 * (n + 1) * (n + 1);
      EXPECT_NEAR(ChebyshevT(x, n), std::cos(n * t), tol) << x << " " << n;
      EXPECT_NEAR(ChebyshevU(x, n), std::sin((n + 1) * t) / std::sin(t), tol * (n + 1));
      EXPECT_NEAR(ChebyshevV(x, n), std::cos((n + 0.5) * t) / std::cos(t / 2), tol * (n + 1));
      EXPECT_NEAR(ChebyshevW(x, n), std::sin((n + 0.5) * t) / std::sin(t / 2), tol * (n + 1));
      const double s = (x + 1) / 2;  // the shifted ones at s are the plain ones at 2s - 1 = x
      EXPECT_NEAR(ShiftedChebyshevT(s, n), ChebyshevT(x, n), tol);
      EXPECT_NEAR(ShiftedChebyshevU(s, n), ChebyshevU(x, n), tol * (n + 1));
      EXPECT_NEAR(ShiftedChebyshevV(s, n), ChebyshevV(x, n), tol * (n + 1));
      EXPECT_NEAR(ShiftedChebyshevW(s, n), ChebyshevW(x, n), tol * (n + 1));
    }
  }
  for (double x : {-2.5, -1.0, 0.0, 0.3, 1.0, 4.0}) {
    EXPECT_NEAR(HermiteH(x, 3), 8 * x * x * x - 12 * x, 1e-12 * (1 + std::fabs(x * x * x)));
    EXPECT_NEAR(HermiteHe(x, 4), x * x * x * x - 6 * x * x + 3, 1e-12 * (1 + x * x * x * x));
    EXPECT_NEAR(LaguerreL(x, 3), (-x * x * x + 9 * x * x - 18 * x + 6) / 6,
                1e-12 * (1 + std::fabs(x * x * x)));
    EXPECT_NEAR(LegendreP(x, 3), (5 * x * x * x - 3 * x) / 2, 1e-12 * (1 + std::fabs(x * x * x)));
    EXPECT_NEAR(ChebyshevT(x, 4), 8 * x * x * x * x - 8 * x * x + 1, 1e-12 * (1 + x * x * x * x));
  }
  // torch's conventions: negative degrees give 0, the ends their closed values, Hermite NaN
  // beyond its limit, a NaN x NaN.
  EXPECT_EQ(LegendreP(0.3, -1), 0.0);
  EXPECT_EQ(ChebyshevU(-1.0, 5), -6.0);
  EXPECT_EQ(ChebyshevV(-1.0, 4), 9.0);
  EXPECT_EQ(ShiftedChebyshevW(1.0, 3), 7.0);
  EXPECT_TRUE(std::isnan(HermiteH(0.5, 513)));
  EXPECT_TRUE(std::isfinite(HermiteH(0.5, 100)));
  EXPECT_TRUE(std::isnan(HermiteHe(0.5f, int64_t{129})));
  EXPECT_TRUE(std::isnan(ChebyshevT(std::nan(""), 5)));
  EXPECT_TRUE(std::isnan(LaguerreL(std::nan(""), 5)));
}

TEST(SpecialFunctionsTest, DegreesConvertAsTorchConvertsThem) {
  EXPECT_EQ(PolynomialDegree(2.9), 2);
  EXPECT_EQ(PolynomialDegree(-2.9), -2);
  EXPECT_EQ(PolynomialDegree(7.0f), 7);
  EXPECT_LT(PolynomialDegree(std::nan("")), 0);
  EXPECT_LT(PolynomialDegree(std::numeric_limits<double>::infinity()), 0);
  EXPECT_LT(PolynomialDegree(-std::numeric_limits<float>::infinity()), 0);
  EXPECT_LT(PolynomialDegree(1e19), 0);
}

}  // namespace
}  // namespace tensord::engine
